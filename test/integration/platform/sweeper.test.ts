// The stuck-service sweeper on a real platform store and task records: lost tasks, duplicates, orphans, live tasks.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { pino } from 'pino';
import { createHooks, type Hooks } from '../../../hooks.ts';
import { SecretBox } from '../../../panel/security/secret-box.ts';
import { openPlatformDb, type Db } from '../../../module/platform/store/db.ts';
import { ProductRepository } from '../../../module/platform/store/repositories/products.ts';
import { ServiceStore } from '../../../module/platform/store/repositories/services.ts';
import { ORPHANED_REASON, StuckServiceSweeper } from '../../../module/platform/sweeper.ts';
import { createTaskQueue, TaskStore, type TaskQueue } from '../../../module/task/index.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let dir: string;
let db: Db;
let services: ServiceStore;
let store: TaskStore;
let queue: TaskQueue;
let hooks: Hooks;
let failedEvents: Array<{ service_uuid: string; action: string; reason: string }>;
let sweeper: StuckServiceSweeper;
let productUuid: string;

beforeEach(() => {
  dir = tempDir('sweeper');
  db = openPlatformDb(dir);
  const box = SecretBox.open(dir);
  services = new ServiceStore(db, box);
  store = new TaskStore(db, box);
  queue = createTaskQueue({ url: 'embedded', db, store });
  const logger = pino({ level: 'silent' });
  hooks = createHooks(logger);
  failedEvents = [];
  hooks.on('service.failed', (e) => void failedEvents.push({ service_uuid: e.service_uuid, action: e.action, reason: e.reason }));
  sweeper = new StuckServiceSweeper(services, queue, hooks, logger);
  productUuid = new ProductRepository(db).create('VpnProduct', { server_location: 'ams' }).uuid;
});

afterEach(() => {
  db.close();
  removeDir(dir);
});

function processingService(): string {
  const { uuid } = services.create({ product_uuid: productUuid, module_name: 'VpnProduct', service_data: { username: 'ann' } });
  services.setProvisionStatus(uuid, 'processing');
  return uuid;
}

const addJob = (uuid: string, action: string) =>
  queue.add('ModuleJob', 'Module', { module: { type: 'Product', name: 'VpnProduct', service_uuid: uuid }, method: `${action}Job` }, [action, `service:${uuid}`]);

test('a service whose last create task failed without it is settled failed with the task error', async () => {
  const uuid = processingService();
  const { id } = await addJob(uuid, 'create');
  store.fail(id, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(await sweeper.run(), [uuid]);
  const service = services.get(uuid)!;
  assert.equal(service.provision_status, 'failed');
  assert.equal(service.status_reason, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(failedEvents, [{ service_uuid: uuid, action: 'create', reason: service.status_reason }]);
});

test('a duplicate create recorded after the failed task does not hide the failure', async () => {
  const uuid = processingService();
  const original = await addJob(uuid, 'create');
  const duplicate = await addJob(uuid, 'create');
  assert.equal(duplicate.status, 'duplicate');
  store.fail(original.id, 'Worker lost during the attempt (process stopped or lease expired)');
  assert.deepEqual(await sweeper.run(), [uuid]);
  assert.equal(services.get(uuid)!.provision_status, 'failed');
});

test('a service with a live task is left alone; one without any task is settled only once it is old', async () => {
  const live = processingService();
  await addJob(live, 'suspend');
  const orphan = processingService();
  assert.deepEqual(await sweeper.run(), []);
  db.prepare('UPDATE services SET updated_at = ? WHERE uuid IN (?, ?)').run(new Date(Date.now() - 120_000).toISOString(), live, orphan);
  assert.deepEqual(await sweeper.run(), [orphan]);
  assert.equal(services.get(live)!.provision_status, 'processing');
  assert.equal(services.get(orphan)!.status_reason, ORPHANED_REASON);
  assert.deepEqual(failedEvents.map((e) => e.service_uuid), [orphan]);
});
