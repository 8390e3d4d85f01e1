// Task.add facade and the ModuleJob handler, end to end on the embedded queue with an in-memory database.
import { taskQueryStore } from '../../fixtures/task/memory-store.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createModuleJob, createTaskQueue, MODULE_JOB, Task, toModuleRef, type ModuleRef } from '../../../module/task/index.ts';
import { MODULE_REF_ERROR } from '../../../module/task/module-job.ts';
import { NO_QUEUE_ERROR } from '../../../module/task/task.ts';

/** A stand-in module with the properties a real module instance exposes. */
class FakeProduct {
  readonly module_type = 'Product';
  readonly module_name = 'VpnProduct';
  abortSignal: AbortSignal | null = null;
  constructor(readonly service_uuid: string, readonly calls: string[] = []) {}
  async createJob() {
    this.calls.push(`createJob:${this.abortSignal ? 'signal' : 'none'}`);
    return { status: 'success' };
  }
  async suspendJob() {
    this.calls.push('suspendJob');
    return { status: 'error', message: 'Suspension failed' };
  }
  async terminationJob(): Promise<never> {
    throw new Error('An unexpected error occurred');
  }
}

test('Task.add without an installed queue fails clearly', async () => {
  Task.use(null);
  await assert.rejects(Task.add('ModuleJob', 'Module', { module: new FakeProduct('u'), method: 'createJob' }, []), { message: NO_QUEUE_ERROR });
});

test('toModuleRef keeps only the reference of an instance', () => {
  assert.deepEqual(toModuleRef(new FakeProduct('s-1')), { type: 'Product', name: 'VpnProduct', service_uuid: 's-1' });
  assert.deepEqual(toModuleRef({ type: 'Plugin', name: 'VpnFleet' }), { type: 'Plugin', name: 'VpnFleet' });
  assert.throws(() => toModuleRef({ type: 'Bogus', name: 'X' }), new RegExp(MODULE_REF_ERROR.slice(0, 20)));
  assert.throws(() => toModuleRef('Product'));
});

test('ModuleJob rebuilds the module, runs the method and maps its result', async () => {
  const db = new Database(':memory:');
  const queue = createTaskQueue({ url: 'embedded', store: taskQueryStore(db), pollMs: 20 });
  const calls: string[] = [];
  const resolved: ModuleRef[] = [];
  queue.register(MODULE_JOB, createModuleJob(async (ref) => {
    resolved.push(ref);
    return new FakeProduct(ref.service_uuid ?? '', calls);
  }));
  Task.use(queue);
  try {
    await queue.start();
    const module = new FakeProduct('svc-1');
    const created = await Task.add('ModuleJob', 'Module', { module, method: 'createJob', tries: 2, backoff: 0 }, ['create', 'service:svc-1']);
    const done = await queue.waitFor(created, 5000);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.input, { module: { type: 'Product', name: 'VpnProduct', service_uuid: 'svc-1' }, method: 'createJob' });
    assert.deepEqual(done.options, { tries: 2, backoff: 0, timeout: 600, maxExceptions: 2 });
    assert.deepEqual(done.result, { status: 'success' });
    assert.deepEqual(resolved[0], { type: 'Product', name: 'VpnProduct', service_uuid: 'svc-1' });
    assert.deepEqual(calls, ['createJob:signal']);

    const suspended = await queue.waitFor(await Task.add('ModuleJob', 'Module', { module, method: 'suspendJob', tries: 2, backoff: 0, maxExceptions: 1 }, ['suspend']), 5000);
    assert.equal(suspended.status, 'failed');
    assert.equal(suspended.lastError, 'Suspension failed');
    assert.equal(suspended.attempts, 2);
    assert.equal(suspended.exceptions, 0);

    const terminated = await queue.waitFor(await Task.add('ModuleJob', 'Module', { module, method: 'terminationJob', tries: 3, backoff: 0, maxExceptions: 1 }, []), 5000);
    assert.equal(terminated.status, 'failed');
    assert.equal(terminated.lastError, 'An unexpected error occurred');
    assert.equal(terminated.attempts, 1);
    assert.equal(terminated.exceptions, 1);

    const missing = await queue.waitFor(await Task.add('ModuleJob', 'Module', { module, method: 'noSuchJob' }, []), 5000);
    assert.equal(missing.lastError, 'Module Product/VpnProduct has no method noSuchJob');
    const proto = await queue.waitFor(await Task.add('ModuleJob', 'Module', { module, method: 'constructor' }, []), 5000);
    assert.equal(proto.status, 'failed');
    assert.equal(proto.lastError, MODULE_REF_ERROR);

    const defaults = await queue.get(await Task.add('Other', 'Module', { value: 1 }, []));
    assert.deepEqual(defaults?.options, { tries: 1, backoff: 10, timeout: 600, maxExceptions: 2 });
    const dispatch = await Task.dispatch('Other', 'Module', { value: 1 }, []);
    assert.equal(dispatch.status, 'duplicate');
    await assert.rejects(Task.add('ModuleJob', 'Module', { method: 'createJob' }, []), new RegExp(MODULE_REF_ERROR.slice(0, 20)));
    await assert.rejects(Task.add('ModuleJob', 'Module', { module, method: 'createJob', tries: 0 }, []));
  } finally {
    Task.use(null);
    await queue.stop(100);
    db.close();
  }
});
