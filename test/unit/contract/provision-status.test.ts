// State-machine tests: every row of the spec's provisioning table, driven through a Product module and a fake queue
// whose events the platform's service lifecycle follows (the one writer of provision_status).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { ACTION_TRANSITIONS, JOB_TRANSITIONS, UNCHANGED, type JobMethod, type ProvisionAction, type ProvisionStatus } from '../../../module/contract/provision-status.ts';
import { JOB_ERRORS } from '../../../module/contract/result.ts';
import type { JobResult } from '../../../module/contract/result.ts';
import { attachLifecycle } from '../../fixtures/task/lifecycle.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

const UUID = 'svc-0001';
let p: TestPlatform;
let product: SampleProduct;

beforeEach(() => {
  p = makePlatform();
  product = new SampleProduct(p.ctx);
  product.service_uuid = UUID;
  attachLifecycle({ services: p.services, hooks: p.hooks, moduleLogs: p.logs, clock: p.clock }, p.queue.events);
});

/** Queues `method`'s task as its lifecycle call would (the row's `from` status set beforehand) and runs it; its answer. */
async function runQueued(method: JobMethod): Promise<JobResult> {
  const id = await p.ctx.tasks.add('ModuleJob', 'Module', { module: product, method }, [JOB_TRANSITIONS[method].action, `service:${UUID}`]);
  p.events.length = 0;
  const record = await p.queue.waitFor(id);
  return record.status === 'completed' ? (record.result as JobResult) : { status: 'error', message: record.lastError ?? undefined };
}
afterEach(() => p.cleanup());

test('the transition table is the spec table (plus unchanged on change_packageJob failure)', () => {
  assert.deepEqual(
    Object.values(ACTION_TRANSITIONS).map((r) => [r.action, r.from, r.next, r.job]),
    [
      ['create', 'any', 'processing', 'createJob'],
      ['suspend', 'any', 'processing', 'suspendJob'],
      ['unsuspend', 'any', UNCHANGED, 'unsuspendJob'],
      ['termination', 'any', UNCHANGED, 'terminationJob'],
      ['change_package', 'any', UNCHANGED, 'change_packageJob'],
    ],
  );
  assert.deepEqual(
    Object.values(JOB_TRANSITIONS).map((r) => [r.method, r.from, r.success, r.failure]),
    [
      ['createJob', 'processing', 'completed', 'failed'],
      ['suspendJob', 'processing', 'suspended', 'failed'],
      ['unsuspendJob', 'any', 'completed', UNCHANGED],
      ['terminationJob', 'any', 'terminated', UNCHANGED],
      ['change_packageJob', 'any', UNCHANGED, UNCHANGED],
    ],
  );
});

describe('lifecycle methods queue their job and set the table status', () => {
  const rows: Array<[ProvisionAction, ProvisionStatus | null]> = [
    ['create', 'processing'],
    ['suspend', 'processing'],
    ['unsuspend', null],
    ['termination', null],
    ['change_package', null],
  ];
  for (const [action, next] of rows) {
    for (const from of ['pending', 'completed', 'suspended', 'failed'] as ProvisionStatus[]) {
      test(`${action}() from ${from} → ${next ?? 'unchanged'}`, async () => {
        p.services.add(UUID, from);
        const result = await product[action]();
        assert.deepEqual(result, { status: 'success' });
        assert.equal(p.services.status(UUID), next ?? from);
        assert.equal(p.queue.records.length, 1);
        const task = p.queue.records[0];
        assert.equal(task.job, 'ModuleJob');
        assert.equal(task.queue, 'Module');
        assert.equal(task.input.module, product);
        assert.equal(task.input.method, `${action}Job`);
        assert.deepEqual(task.tags, [action, `service:${UUID}`]);
        assert.deepEqual(task.options, { tries: 1, backoff: 10, timeout: 600, maxExceptions: 2 });
        assert.equal(p.queue.records[0].status, 'pending', 'queued, not run inline');
        assert.deepEqual(product.calls, []);
      });
    }
  }

  test('create() emits service.created with the service and product', async () => {
    p.services.add(UUID, 'pending');
    await product.create();
    assert.equal(p.events.length, 1);
    assert.equal(p.events[0].event, 'service.created');
    assert.equal(p.events[0].payload.service_uuid, UUID);
    assert.equal(p.events[0].payload.product_uuid, `product-of-${UUID}`);
    assert.equal(p.events[0].payload.module, 'SampleProduct');
    assert.equal(p.events[0].payload.at, '2026-01-01T00:00:00.000Z');
  });

  test('a lifecycle call on an unknown service answers Invalid data provided and queues nothing', async () => {
    const result = await product.create();
    assert.deepEqual(result, { status: 'error', message: JOB_ERRORS.invalidData });
    assert.equal(p.queue.records.length, 0);
  });

  test('when queueing fails the status is left as it was (the lifecycle writes it only with the task record)', async () => {
    p.services.add(UUID, 'completed');
    p.ctx.tasks = { add: async () => Promise.reject(new Error('queue down')) };
    const broken = new SampleProduct(p.ctx);
    broken.service_uuid = UUID;
    assert.deepEqual(await broken.suspend(), { status: 'error', message: JOB_ERRORS.unavailable });
    assert.equal(p.services.status(UUID), 'completed');
    assert.deepEqual(p.services.history.map((h) => h.status), []);
  });

  test('static jobOptions override the spec defaults', async () => {
    class Tuned extends SampleProduct {
      static override jobOptions = { tries: 3, backoff: 10, timeout: 60, maxExceptions: 1 };
    }
    const tuned = new Tuned(p.ctx);
    tuned.service_uuid = UUID;
    p.services.add(UUID, 'pending');
    await tuned.create();
    assert.deepEqual(p.queue.records[0].options, { tries: 3, backoff: 10, timeout: 60, maxExceptions: 1 });
  });
});

describe('job outcomes apply the table transition', () => {
  type Row = [JobMethod, ProvisionStatus, 'success' | 'error' | 'throw', ProvisionStatus, string | null];
  const rows: Row[] = [
    ['createJob', 'processing', 'success', 'completed', 'service.provisioned'],
    ['createJob', 'processing', 'error', 'failed', 'service.failed'],
    ['createJob', 'processing', 'throw', 'failed', 'service.failed'],
    ['suspendJob', 'processing', 'success', 'suspended', 'service.suspended'],
    ['suspendJob', 'processing', 'error', 'failed', 'service.failed'],
    ['suspendJob', 'processing', 'throw', 'failed', 'service.failed'],
    ['unsuspendJob', 'suspended', 'success', 'completed', 'service.unsuspended'],
    ['unsuspendJob', 'failed', 'success', 'completed', 'service.unsuspended'],
    ['unsuspendJob', 'suspended', 'error', 'suspended', 'service.failed'],
    ['unsuspendJob', 'suspended', 'throw', 'suspended', 'service.failed'],
    ['terminationJob', 'completed', 'success', 'terminated', 'service.terminated'],
    ['terminationJob', 'suspended', 'success', 'terminated', 'service.terminated'],
    ['terminationJob', 'completed', 'error', 'completed', 'service.failed'],
    ['terminationJob', 'suspended', 'throw', 'suspended', 'service.failed'],
    ['change_packageJob', 'completed', 'success', 'completed', 'service.package_changed'],
    ['change_packageJob', 'suspended', 'success', 'suspended', 'service.package_changed'],
    ['change_packageJob', 'completed', 'error', 'completed', 'service.failed'],
  ];
  for (const [method, from, outcome, to, event] of rows) {
    test(`${method} from ${from}, ${outcome} → ${to}`, async () => {
      p.services.add(UUID, from, { domain: 'example.com', username: 'alice', password: 'Hunter2Secret' });
      product.outcomes[method] = [outcome];
      const result = await runQueued(method);
      assert.equal(result.status, outcome === 'success' ? 'success' : 'error');
      assert.equal(p.services.status(UUID), to);
      assert.deepEqual(product.calls, [method]);
      assert.deepEqual(p.events.map((e) => e.event), event ? [event] : []);
      const logs = (await p.logs.read({ name: 'SampleProduct' }));
      assert.equal(logs.length, 1);
      assert.equal(logs[0].level, outcome === 'success' ? 'info' : 'error');
      assert.equal(logs[0].action, JOB_TRANSITIONS[method].action);
      assert.equal(logs[0].context.service_uuid, UUID);
      if (outcome !== 'success') {
        const failed = p.events[0].payload as { action: string; reason: string };
        assert.equal(failed.action, JOB_TRANSITIONS[method].action);
        assert.equal(failed.reason, result.message);
        if (to === 'failed') assert.equal(p.services.get(UUID)?.status_reason, result.message);
      }
    });
  }

  test('createJob success stores the provision data', async () => {
    p.services.add(UUID, 'processing');
    await product.createJob();
    assert.deepEqual(p.services.get(UUID)?.provision_data, { account: `acct-${UUID}`, access_hash: 'h'.repeat(80) });
  });

  test('a thrown exception becomes {status:error} with its message, secrets cut out', async () => {
    p.services.add(UUID, 'processing', { username: 'alice', password: 'provider' });
    product.outcomes.createJob = ['throw'];
    const result = await product.runJob('createJob');
    assert.equal(result.status, 'error');
    assert.equal(result.message, '[redacted] exploded during createJob');
  });

  test('an error result keeps its spec text', async () => {
    p.services.add(UUID, 'processing');
    product.outcomes.suspendJob = ['error'];
    assert.deepEqual(await product.runJob('suspendJob'), { status: 'error', message: JOB_ERRORS.suspensionFailed });
  });

  test('createJob / suspendJob re-enter processing when run again after a failure', async () => {
    p.services.add(UUID, 'failed');
    await product.create();
    await p.queue.drain();
    assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'completed']);
  });

  test('no job but terminationJob runs on a terminated service', async () => {
    p.services.add(UUID, 'terminated');
    assert.deepEqual(await product.runJob('createJob'), { status: 'error', message: JOB_ERRORS.invalidData });
    assert.deepEqual(await runQueued('unsuspendJob'), { status: 'error', message: JOB_ERRORS.invalidData });
    assert.deepEqual(product.calls, []);
    assert.equal(p.services.status(UUID), 'terminated');
    assert.equal((await runQueued('terminationJob')).status, 'success');
  });

  test('create() on a terminated service queues it again from processing, as the table says (from any)', async () => {
    p.services.add(UUID, 'terminated');
    assert.equal((await runQueued('createJob')).status, 'success');
    assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'completed']);
  });

  test('the job sees the abort signal given by the worker, also when set directly on the instance', async () => {
    p.services.add(UUID, 'processing');
    const controller = new AbortController();
    await product.runJob('createJob', { signal: controller.signal });
    assert.equal(product.seenSignal, controller.signal);
    const other = new AbortController();
    product.abortSignal = other.signal;
    await product.suspendJob();
    assert.equal(product.seenSignal, other.signal);
  });
});

describe('through the queue', () => {
  test('create() then the worker: processing → completed, events created + provisioned', async () => {
    p.services.add(UUID, 'pending');
    await product.create();
    await p.queue.drain();
    assert.equal(p.queue.records[0].status, 'completed');
    assert.equal(p.services.status(UUID), 'completed');
    assert.deepEqual(p.events.map((e) => e.event), ['service.created', 'service.provisioned']);
  });

  test('failures before the last try keep processing; success on try 3 completes', async () => {
    class Retrying extends SampleProduct {
      static override jobOptions = { tries: 3 };
    }
    const retrying = new Retrying(p.ctx);
    retrying.service_uuid = UUID;
    retrying.outcomes.createJob = ['error', 'throw', 'success'];
    p.services.add(UUID, 'pending');
    await retrying.create();
    await p.queue.drain();
    assert.equal(p.queue.records[0].attempts, 3);
    assert.deepEqual(p.services.history.map((h) => h.status), ['processing', 'completed']);
    assert.deepEqual(p.events.map((e) => e.event), ['service.created', 'service.provisioned']);
  });

  test('failure on the last try → failed once, with the reason', async () => {
    class Twice extends SampleProduct {
      static override jobOptions = { tries: 2 };
    }
    const twice = new Twice(p.ctx);
    twice.service_uuid = UUID;
    twice.outcomes.suspendJob = ['error'];
    p.services.add(UUID, 'completed');
    await twice.suspend();
    await p.queue.drain();
    assert.equal(p.queue.records[0].status, 'failed');
    assert.equal(p.queue.records[0].lastError, JOB_ERRORS.suspensionFailed);
    assert.deepEqual(p.services.history, [
      { uuid: UUID, status: 'processing' },
      { uuid: UUID, status: 'failed', reason: JOB_ERRORS.suspensionFailed },
    ]);
    assert.deepEqual(p.events.map((e) => e.event), ['service.failed']);
  });

  test('a failed attempt with a try left keeps the status (the queue decides the retry, the lifecycle only follows)', async () => {
    class Twice extends SampleProduct {
      static override jobOptions = { tries: 2 };
    }
    const twice = new Twice(p.ctx);
    twice.service_uuid = UUID;
    twice.outcomes.createJob = ['error'];
    p.services.add(UUID, 'pending');
    const seen: string[] = [];
    p.queue.events.on((event) => void seen.push(`${event.type}:${p.services.status(UUID)}`));
    await twice.create();
    await p.queue.drain();
    assert.deepEqual(seen, ['queued:processing', 'retrying:processing', 'finished:failed']);
    const retryLog = (await p.logs.read({ name: 'Twice', level: 'error' })).find((row) => (row.response as { retry?: boolean }).retry);
    assert.equal((retryLog?.response as { provision_status?: string }).provision_status, 'processing');
  });
});
