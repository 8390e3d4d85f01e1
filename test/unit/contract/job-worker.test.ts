// The platform's ModuleJob handler on a real embedded queue with the service lifecycle following its events: attempts,
// tries and maxExceptions as the task records them decide the service status.
import { taskQueryStore } from '../../fixtures/task/memory-store.ts';
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import Database from 'better-sqlite3';
import type { PlatformContext } from '../../../module/contract/platform-context.ts';
import type { JobResult } from '../../../module/contract/result.ts';
import { moduleJobHandler } from '../../../module/platform/workers.ts';
import { createTaskQueue, MODULE_JOB, Task, type TaskOptions, type TaskQueue } from '../../../module/task/index.ts';
import { attachLifecycle } from '../../fixtures/task/lifecycle.ts';
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
  queue = createTaskQueue({ url: 'embedded', store: taskQueryStore(db), pollMs: 10 });
  Task.use(queue);
  attachLifecycle({ services: p.services, hooks: p.hooks, moduleLogs: p.logs, clock: p.clock }, queue.events);
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

test('a throw reaching maxExceptions is the last attempt; a throw after the attempt was aborted (timeout) is not an exception', async () => {
  let calls = 0;
  class Scripted extends SampleProduct {
    static override jobOptions: Partial<TaskOptions> = { tries: 3, backoff: 0, timeout: 1, maxExceptions: 2 };
    override async createJob(): Promise<JobResult> {
      calls += 1;
      if (calls === 2) {
        // Throws only once the worker aborted the attempt (its timeout passed).
        await new Promise((_, reject) => this.abortSignal?.addEventListener('abort', () => reject(new Error('gave up')), { once: true }));
      }
      throw new Error('provider exploded during createJob');
    }
  }
  const resolve = (uuid: string) => {
    const instance = new Scripted(ctx);
    instance.service_uuid = uuid;
    return instance;
  };
  const statuses: string[] = [];
  const task = await (async () => {
    p.services.add(UUID, 'pending');
    await resolve(UUID).create();
    queue.events.on((event) => void (event.type !== 'queued' && statuses.push(`${event.type}:${p.services.status(UUID)}`)));
    queue.register(MODULE_JOB, moduleJobHandler(resolve));
    await queue.start({ concurrency: 1 });
    const [queued] = await queue.list({ tag: `service:${UUID}` });
    return queue.waitFor(queued.id, 10_000);
  })();
  assert.equal(task.status, 'failed');
  assert.equal(task.attempts, 3);
  assert.equal(task.exceptions, 2, 'the timed-out attempt is a plain failure');
  assert.deepEqual(statuses, ['retrying:processing', 'retrying:processing', 'finished:failed'], 'first exception of two allowed and the timeout: retried; second exception: failed');
  assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'failed']);
  assert.deepEqual(p.events.map((e) => e.event), ['service.created', 'service.failed']);
});
