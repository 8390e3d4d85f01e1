// Contract suite of the core repositories' additions for the lifecycle (ServiceQueries' conditional status write and
// locked read) and of the lifecycle's one transaction with the task record, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { createHooks } from '../../hooks.ts';
import { manualClock } from '../../shared/clock.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import type { ModuleLogEntry } from '../../module/contract/log.ts';
import { ServiceLifecycle } from '../../module/platform/services/lifecycle.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import { resolveOptions } from '../../module/task/options.ts';
import { TaskStore } from '../../module/task/task-store.ts';
import { withSealedStore, type OpenStore } from './store.contract.ts';

type Clock = ReturnType<typeof manualClock>;

async function serviceOf(store: QueryStore, box: SecretBox, clock: Clock): Promise<string> {
  const product = await new ProductQueries(store, clock).create('VpnProduct', { server_location: 'ams' });
  return (await new ServiceQueries(store, box, clock).create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann' } })).uuid;
}

const createTask = (uuid: string) => ({
  backend: 'embedded' as const, job: 'ModuleJob', queue: 'Module', input: { module: { type: 'Product', name: 'VpnProduct', service_uuid: uuid }, method: 'createJob' },
  tags: ['create', `service:${uuid}`], options: resolveOptions({}),
});

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract, core (lifecycle): ${engine}`, () => {
    test('services: a status write conditional on the current status; once: two concurrent writers, one wins', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const services = new ServiceQueries(store, box, clock);
      const uuid = await serviceOf(store, box, clock);
      assert.equal(await services.writeProvisionStatus(uuid, 'processing', undefined, 'completed'), false, 'not completed: nothing written');
      assert.equal(await services.writeProvisionStatus(uuid, 'processing'), true);
      const both = await Promise.all([
        services.writeProvisionStatus(uuid, 'failed', 'first', 'processing'),
        services.writeProvisionStatus(uuid, 'failed', 'second', 'processing'),
      ]);
      assert.deepEqual(both.filter(Boolean), [true]);
      const row = await services.getForStatusChange(uuid);
      assert.equal(row?.provision_status, 'failed');
      assert.deepEqual(row, { uuid, product_uuid: (await services.get(uuid))?.product_uuid, provision_status: 'failed' });
      assert.equal(await services.getForStatusChange('missing'), null);
    }));

    test('lifecycle: the status commits with the task record in one transaction; a throw after it undoes both', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const logger = pino({ level: 'silent' });
      const hooks = createHooks(logger);
      const fired: string[] = [];
      hooks.on('service.created', () => void fired.push('created'));
      const logs: ModuleLogEntry[] = [];
      const tasks = new TaskStore(store, box, clock);
      const lifecycle = new ServiceLifecycle<QueryStore>({
        statuses: (tx) => new ServiceQueries(tx ?? store, box, clock).statusStore(), hooks, moduleLogs: { write: (entry) => void logs.push(entry) }, clock, logger,
      });
      lifecycle.attach(tasks.events);
      const services = new ServiceQueries(store, box, clock);
      const broken = await serviceOf(store, box, clock);
      const off = tasks.events.on(() => {
        throw new Error('after the lifecycle');
      });
      await assert.rejects(tasks.insert(createTask(broken)), /after the lifecycle/);
      assert.equal((await services.get(broken))?.provision_status, 'pending', 'the status write was undone with the record');
      assert.deepEqual(await tasks.list({ tag: `service:${broken}` }), []);
      assert.deepEqual(fired, [], 'no hook for a change that did not commit');
      off();
      await tasks.insert(createTask(broken));
      assert.equal((await services.get(broken))?.provision_status, 'processing');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(fired, ['created'], 'the hook runs once the change committed');
      const claimed = await tasks.claimNext('embedded', 'w', 1000);
      await tasks.settle(claimed!.record.id, 'w', { status: 'failed', exceptions: 0, lastError: 'panel down', result: null, availableAt: clock.now().getTime() });
      const failed = await services.get(broken);
      assert.deepEqual([failed?.provision_status, failed?.status_reason], ['failed', 'panel down']);
      assert.deepEqual(logs.map((l) => l.level), ['error']);
    }));
  });
}
