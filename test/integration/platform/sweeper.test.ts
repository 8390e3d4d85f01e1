// The service lifecycle and the sweeper (its safety net) on a real platform store and task records: a task failed for
// good settles its service at once (duplicates do not hide it); the sweeper only fails services whose task vanished.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { pino } from 'pino';
import { createHooks, type Hooks } from '../../../hooks.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { systemClock } from '../../../shared/clock.ts';
import { ModuleLogRepository } from '../../../module/platform/store/query/repositories/module-logs.ts';
import { ServiceLifecycle } from '../../../module/platform/services/lifecycle.ts';
import { openPlatformDb, type Db } from '../../../module/platform/store/db.ts';
import { sqliteQueryStore, type QueryStore } from '../../../module/platform/store/query/query-store.ts';
import { ProductQueries } from '../../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../../module/platform/store/query/repositories/services.ts';
import { ORPHANED_REASON, StuckServiceSweeper } from '../../../module/platform/sweeper.ts';
import { createTaskQueue, TaskStore, type TaskQueue } from '../../../module/task/index.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let dir: string;
let db: Db;
let services: ServiceQueries;
let store: TaskStore<QueryStore>;
let queue: TaskQueue;
let hooks: Hooks;
let failedEvents: Array<{ service_uuid: string; action: string; reason: string }>;
let sweeper: StuckServiceSweeper;
let productUuid: string;

beforeEach(async () => {
  dir = tempDir('sweeper');
  db = openPlatformDb(dir);
  const box = SecretBox.open(dir);
  const query = sqliteQueryStore(db);
  services = new ServiceQueries(query, box);
  store = new TaskStore(query, box);
  queue = createTaskQueue({ url: 'embedded', store });
  const logger = pino({ level: 'silent' });
  hooks = createHooks(logger);
  failedEvents = [];
  hooks.on('service.failed', (e) => void failedEvents.push({ service_uuid: e.service_uuid, action: e.action, reason: e.reason }));
  const lifecycle = new ServiceLifecycle<QueryStore>({
    statuses: (tx) => new ServiceQueries(tx ?? query, box).statusStore(), hooks, moduleLogs: new ModuleLogRepository(query), clock: systemClock, logger,
  });
  lifecycle.attach(store.events);
  sweeper = new StuckServiceSweeper({ services, queue, lifecycle, logger });
  productUuid = (await new ProductQueries(query).create('VpnProduct', { server_location: 'ams' })).uuid;
});

afterEach(() => {
  db.close();
  removeDir(dir);
});

async function processingService(): Promise<string> {
  const { uuid } = await services.create({ product_uuid: productUuid, module_name: 'VpnProduct', service_data: { username: 'ann' } });
  await services.writeProvisionStatus(uuid, 'processing');
  return uuid;
}

const addJob = (uuid: string, action: string) =>
  queue.add('ModuleJob', 'Module', { module: { type: 'Product', name: 'VpnProduct', service_uuid: uuid }, method: `${action}Job` }, [action, `service:${uuid}`]);

test('a service whose create task failed without the job seeing it (lost worker) is settled failed with the task error at once', async () => {
  const uuid = await processingService();
  const { id } = await addJob(uuid, 'create');
  await store.fail(id, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(await sweeper.run(), [], 'nothing left for the safety net');
  const service = (await services.get(uuid))!;
  assert.equal(service.provision_status, 'failed');
  assert.equal(service.status_reason, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(failedEvents, [{ service_uuid: uuid, action: 'create', reason: service.status_reason }]);
});

test('a duplicate create recorded after the failed task does not hide the failure', async () => {
  const uuid = await processingService();
  const original = await addJob(uuid, 'create');
  const duplicate = await addJob(uuid, 'create');
  assert.equal(duplicate.status, 'duplicate');
  await store.fail(original.id, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(await sweeper.run(), []);
  assert.equal((await services.get(uuid))!.provision_status, 'failed');
  assert.deepEqual(failedEvents.map((e) => e.service_uuid), [uuid]);
});

test('a service with a live task is left alone; one without any task is settled only once it is old', async () => {
  const live = await processingService();
  await addJob(live, 'suspend');
  const orphan = await processingService();
  assert.deepEqual(await sweeper.run(), []);
  db.prepare('UPDATE services SET updated_at = ? WHERE uuid IN (?, ?)').run(new Date(Date.now() - 120_000).toISOString(), live, orphan);
  assert.deepEqual(await sweeper.run(), [orphan]);
  assert.equal((await services.get(live))!.provision_status, 'processing');
  assert.equal((await services.get(orphan))!.status_reason, ORPHANED_REASON);
  assert.deepEqual(failedEvents.map((e) => e.service_uuid), [orphan]);
});
