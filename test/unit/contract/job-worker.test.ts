// The platform's ModuleJob handler on a real embedded queue: attempts, tries and maxExceptions as the task records them.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import Database from 'better-sqlite3';
import type { PlatformContext } from '../../../module/contract/platform-context.ts';
import { moduleJobHandler } from '../../../module/platform/workers.ts';
import { createTaskQueue, MODULE_JOB, Task, type TaskOptions, type TaskQueue } from '../../../module/task/index.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct, type Outcome } from './helpers/sample-product.ts';

const UUID = 'svc-worker-1';
let p: TestPlatform;
let db: Database.Database;
let queue: TaskQueue;
let ctx: PlatformContext;

beforeEach(() => {
  p = makePlatform();
  db = new Database(':memory:');
  queue = createTaskQueue({ url: 'embedded', db, pollMs: 10 });
  Task.use(queue);
  ctx = { ...p.ctx, tasks: { add: (job, name, input, tags) => Task.add(job, name, input, tags) } };
});

afterEach(async () => {
  await queue.stop(1000);
  Task.use(null);
  db.close();
  p.cleanup();
});

/** A SampleProduct class with `options` as its job options; every instance the worker builds shares `createJob` outcomes. */
function productClass(options: Partial<TaskOptions>, createJob: Outcome[]) {
  class Scripted extends SampleProduct {
    static override jobOptions: Partial<TaskOptions> = options;
  }
  const resolve = (uuid: string) => {
    const instance = new Scripted(ctx);
    instance.service_uuid = uuid;
    instance.outcomes.createJob = createJob;
    return instance;
  };
  return { Scripted, resolve };
}

async function runCreate(resolve: (uuid: string) => SampleProduct) {
  p.services.add(UUID, 'pending');
  assert.deepEqual(await resolve(UUID).create(), { status: 'success' });
  queue.register(MODULE_JOB, moduleJobHandler(resolve));
  await queue.start({ concurrency: 1 });
  const [task] = await queue.list({ tag: `service:${UUID}` });
  return queue.waitFor(task.id, 10_000);
}

test('a thrown exception reaching maxExceptions fails the task and the service at once, tries left or not', async () => {
  const { resolve } = productClass({ tries: 3, backoff: 0, maxExceptions: 1 }, ['throw', 'success']);
  const task = await runCreate(resolve);
  assert.equal(task.status, 'failed');
  assert.equal(task.attempts, 1);
  assert.equal(task.exceptions, 1);
  assert.equal(task.lastError, 'provider exploded during createJob');
  assert.equal(p.services.status(UUID), 'failed');
  assert.equal(p.services.records.get(UUID)?.status_reason, 'provider exploded during createJob');
  assert.deepEqual(p.events.map((e) => e.event), ['service.created', 'service.failed']);
});

test('error results are not exceptions: the second throw ends the task under maxExceptions 2', async () => {
  const { resolve } = productClass({ tries: 5, backoff: 0, maxExceptions: 2 }, ['throw', 'error', 'throw', 'success']);
  const task = await runCreate(resolve);
  assert.equal(task.status, 'failed');
  assert.equal(task.attempts, 3);
  assert.equal(task.exceptions, 2);
  assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'failed']);
  assert.deepEqual(p.events.map((e) => e.event), ['service.created', 'service.failed']);
});

test('the attempt counts against the tries the task was queued with, not the module’s current options', async () => {
  const { Scripted, resolve } = productClass({ tries: 2, backoff: 0 }, ['error', 'success']);
  p.services.add(UUID, 'pending');
  await resolve(UUID).create();
  Scripted.jobOptions = { tries: 1, backoff: 0 };
  queue.register(MODULE_JOB, moduleJobHandler(resolve));
  await queue.start({ concurrency: 1 });
  const [queued] = await queue.list({ tag: `service:${UUID}` });
  const task = await queue.waitFor(queued.id, 10_000);
  assert.equal(task.status, 'completed');
  assert.equal(task.attempts, 2);
  assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'completed']);
});

test('the platform handler runs provisioning jobs of Products only', async () => {
  const { resolve } = productClass({ backoff: 0 }, ['success']);
  queue.register(MODULE_JOB, moduleJobHandler(resolve));
  await queue.start({ concurrency: 1 });
  const plugin = await queue.waitFor(await Task.add(MODULE_JOB, 'Module', { module: { type: 'Plugin', name: 'Fleet' }, method: 'syncJob' }, []), 10_000);
  assert.equal(plugin.lastError, 'ModuleJob Plugin/Fleet is not a provisioning job');
  const page = await queue.waitFor(await Task.add(MODULE_JOB, 'Module', { module: { type: 'Product', name: 'SampleProduct', service_uuid: UUID }, method: 'getProductPage' }, []), 10_000);
  assert.equal(page.lastError, 'ModuleJob method getProductPage is not a provisioning job');
  assert.deepEqual(p.services.history, []);
});

test('runJob: a throw reaching maxExceptions is the last attempt; a throw after the attempt was aborted is not an exception', async () => {
  const product = new SampleProduct(ctx);
  product.service_uuid = UUID;
  p.services.add(UUID, 'processing');
  product.outcomes.createJob = ['throw'];
  const opts = { attempt: 1, tries: 3, exceptions: 0, maxExceptions: 2 };
  assert.deepEqual(await product.runJob('createJob', opts), { status: 'error', message: 'provider exploded during createJob' });
  assert.equal(p.services.status(UUID), 'processing', 'first exception of two allowed: retried');
  const aborted = AbortSignal.abort(new Error('Task attempt timed out after 60 s'));
  await product.runJob('createJob', { ...opts, attempt: 2, exceptions: 1, signal: aborted });
  assert.equal(p.services.status(UUID), 'processing', 'the timed-out attempt is a plain failure with a try left');
  await assert.rejects(product.runJob('createJob', { ...opts, attempt: 2, exceptions: 1, rethrow: true }), { message: 'provider exploded during createJob' });
  assert.equal(p.services.status(UUID), 'failed', 'second exception: failed although a try is left');
  assert.deepEqual(p.events.map((e) => e.event), ['service.failed']);
});
