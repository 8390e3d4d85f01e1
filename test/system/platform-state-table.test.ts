// Every row of the spec's provisioning state table (success, provider failure, exception, retries exhausted, for each
// lifecycle action) on the embedded queue, on BullMQ (a private redis-server) and through a remote worker that reaches
// the task records over the worker API. Each status is written once, and only by the service lifecycle: a SQLite
// trigger records every provision_status write and must match the lifecycle's own write log exactly.
import { sqliteQueryStore, type QueryStore } from '../../module/platform/store/query/query-store.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { pino } from 'pino';
import { createHooks, type HookEventName } from '../../hooks.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { systemClock } from '../../shared/clock.ts';
import { ModuleLogRepository } from '../../module/platform/store/query/repositories/module-logs.ts';
import type { PlatformContext } from '../../module/contract/platform-context.ts';
import { Product } from '../../module/contract/product.ts';
import { JOB_ERRORS, jobError, jobSuccess, type JobResult } from '../../module/contract/result.ts';
import { ACTION_TRANSITIONS, type JobMethod, type ProvisionAction, type ProvisionStatus } from '../../module/contract/provision-status.ts';
import { StoredModuleVersions } from '../../module/platform/store/query/repositories/module-versions.ts';
import { workerTaskRoutes } from '../../module/platform/routes/worker-tasks.ts';
import { ServiceLifecycle, type StatusWrite } from '../../module/platform/services/lifecycle.ts';
import { openPlatformDb, type Db } from '../../module/platform/store/db.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { WorkerApiClient } from '../../module/platform/worker-api/client.ts';
import { RemoteTaskStore } from '../../module/platform/worker-api/remote-task-store.ts';
import { startWorkers, type Workers } from '../../module/platform/workers.ts';
import { BullmqQueue } from '../../module/task/bullmq.ts';
import { createTaskQueue, Task, TaskStore, type TaskOptions, type TaskQueue } from '../../module/task/index.ts';
import { removeDir, startRedis, tempDir } from '../fixtures/platform/processes.ts';
import { until } from '../fixtures/platform/http.ts';
import { requireTools } from '../helpers/require-tools.ts';

type Outcome = 'success' | 'error' | 'throw' | 'exhausted';
const OUTCOMES: Outcome[] = ['success', 'error', 'throw', 'exhausted'];

/** A Product whose jobs answer what the service's `outcome` says; `exhausted` fails every one of its 3 tries. */
class StateTableProduct extends Product {
  static override version = '1.0.0';

  override jobOptions(method: JobMethod): TaskOptions {
    const outcome = this.service_data.outcome as Outcome;
    if (outcome === 'exhausted') return { ...super.jobOptions(method), tries: 3, backoff: 0 };
    if (outcome === 'throw') return { ...super.jobOptions(method), tries: 3, backoff: 0, maxExceptions: 1 };
    return { ...super.jobOptions(method), tries: 1, backoff: 0 };
  }

  private answer(): JobResult {
    const outcome = this.service_data.outcome as Outcome;
    if (outcome === 'throw') throw new Error('provider exploded');
    return outcome === 'success' ? jobSuccess() : jobError(JOB_ERRORS.unknown);
  }

  async createJob(): Promise<JobResult> {
    return this.answer();
  }
  async suspendJob(): Promise<JobResult> {
    return this.answer();
  }
  async unsuspendJob(): Promise<JobResult> {
    return this.answer();
  }
  async terminationJob(): Promise<JobResult> {
    return this.answer();
  }
  async change_packageJob(): Promise<JobResult> {
    return this.answer();
  }
}

/** The status each action starts from, and the statuses written for success and for a final failure (the spec's rows). */
const ROWS: Record<ProvisionAction, { from: ProvisionStatus; success: ProvisionStatus[]; failure: ProvisionStatus[]; event: HookEventName }> = {
  create: { from: 'pending', success: ['processing', 'completed'], failure: ['processing', 'failed'], event: 'service.provisioned' },
  suspend: { from: 'completed', success: ['processing', 'suspended'], failure: ['processing', 'failed'], event: 'service.suspended' },
  unsuspend: { from: 'suspended', success: ['completed'], failure: [], event: 'service.unsuspended' },
  termination: { from: 'completed', success: ['terminated'], failure: [], event: 'service.terminated' },
  change_package: { from: 'completed', success: [], failure: [], event: 'service.package_changed' },
};

interface Rig {
  db: Db;
  services: ServiceQueries;
  taskStore: TaskStore<QueryStore>;
  lifecycle: ServiceLifecycle;
  writes: StatusWrite[];
  events: Array<{ event: HookEventName; uuid: string }>;
  productUuid: string;
  ctx: PlatformContext;
  dir: string;
  logs: ModuleLogRepository;
}

async function rig(): Promise<Rig> {
  const dir = tempDir('state-table');
  const db = openPlatformDb(dir);
  const box = SecretBox.open(dir);
  const query = sqliteQueryStore(db);
  const services = new ServiceQueries(query, box);
  const taskStore = new TaskStore(query, box);
  const logs = new ModuleLogRepository(query);
  const logger = pino({ level: 'silent' });
  const hooks = createHooks(logger);
  const events: Rig['events'] = [];
  for (const event of ['service.created', 'service.provisioned', 'service.failed', 'service.suspended', 'service.unsuspended', 'service.terminated', 'service.package_changed'] as const) {
    hooks.on(event, (payload) => void events.push({ event, uuid: payload.service_uuid }));
  }
  const lifecycle = new ServiceLifecycle<QueryStore>({
    statuses: (tx) => new ServiceQueries(tx ?? query, box).statusStore(), hooks, moduleLogs: logs, clock: systemClock, logger,
  });
  const writes: StatusWrite[] = [];
  lifecycle.onWrite((write) => void writes.push(write));
  lifecycle.attach(taskStore.events);
  // Every provision_status write on this connection, whoever makes it.
  db.exec(`CREATE TEMP TABLE status_audit (seq INTEGER PRIMARY KEY, uuid TEXT NOT NULL, status TEXT NOT NULL);
    CREATE TEMP TRIGGER status_audit_update AFTER UPDATE OF provision_status ON services
    WHEN new.provision_status IS NOT old.provision_status OR new.status_reason IS NOT old.status_reason
    BEGIN INSERT INTO status_audit (uuid, status) VALUES (new.uuid, new.provision_status); END;`);
  const productUuid = (await new ProductQueries(query).create('StateTableProduct', {})).uuid;
  const ctx: PlatformContext = {
    services: services.forModules(lifecycle),
    tasks: { add: (job, queue, input, tags) => Task.add(job, queue, input, tags) },
    hooks,
    logger,
    config: { enabled: true, version: '1.0.0' },
    viewsDir: dir,
    clock: systemClock,
    moduleLogs: logs,
    versions: new StoredModuleVersions(query, systemClock),
  } as PlatformContext;
  return { db, services, taskStore, lifecycle, writes, events, productUuid, ctx, dir, logs };
}

async function productFor(r: Rig, uuid: string): Promise<StateTableProduct> {
  const product = new StateTableProduct(r.ctx);
  product.service_uuid = uuid;
  product.service_data = { ...(await r.services.get(uuid))!.service_data };
  return product;
}

/** Creates one service per (action, outcome), each at its row's `from` status (written before the audit counts). */
async function seed(r: Rig): Promise<Array<{ uuid: string; action: ProvisionAction; outcome: Outcome }>> {
  const cases: Array<{ uuid: string; action: ProvisionAction; outcome: Outcome }> = [];
  for (const action of Object.keys(ROWS) as ProvisionAction[]) {
    for (const outcome of OUTCOMES) {
      const { uuid } = (await r.services.create({ product_uuid: r.productUuid, module_name: 'StateTableProduct', service_data: { username: 'table', outcome } }));
      if (ROWS[action].from !== 'pending') await r.services.writeProvisionStatus(uuid, ROWS[action].from);
      cases.push({ uuid, action, outcome });
    }
  }
  r.db.exec('DELETE FROM temp.status_audit');
  return cases;
}

/** Queues every case's action through the module (as the admin API does) and waits until every task is final. */
async function drive(r: Rig, queue: TaskQueue, cases: Awaited<ReturnType<typeof seed>>): Promise<void> {
  for (const c of cases) assert.deepEqual(await (await productFor(r, c.uuid))[c.action](), { status: 'success' });
  await until(async () => {
    const open = (await r.taskStore.list({ limit: 1000 })).filter((t) => t.status === 'pending' || t.status === 'processing');
    return open.length === 0 ? true : undefined;
  }, 60_000, 50);
  // Hook listeners run right after the write: wait until each case's last event arrived (check() then wants no more).
  const lastEvent = (c: (typeof cases)[number]) => (c.outcome === 'success' ? ROWS[c.action].event : 'service.failed');
  await until(async () => (cases.every((c) => r.events.some((e) => e.uuid === c.uuid && e.event === lastEvent(c))) ? true : undefined), 10_000, 10);
  void queue;
}

async function check(r: Rig, cases: Awaited<ReturnType<typeof seed>>): Promise<void> {
  const audit = r.db.prepare('SELECT uuid, status FROM temp.status_audit ORDER BY seq').all() as Array<{ uuid: string; status: string }>;
  assert.deepEqual(audit, r.writes.map((w) => ({ uuid: w.uuid, status: w.status })), 'every provision_status write is a lifecycle write');
  for (const c of cases) {
    const label = `${c.action}Job ${c.outcome}`;
    const row = ROWS[c.action];
    const expected = c.outcome === 'success' ? row.success : row.failure;
    assert.deepEqual(audit.filter((a) => a.uuid === c.uuid).map((a) => a.status), expected, `${label}: each status written once, in order`);
    const service = (await r.services.get(c.uuid))!;
    assert.equal(service.provision_status, expected.at(-1) ?? row.from, label);
    const [task] = await r.taskStore.list({ tag: `service:${c.uuid}` });
    assert.equal(task.status, c.outcome === 'success' ? 'completed' : 'failed', label);
    assert.equal(task.attempts, c.outcome === 'exhausted' ? 3 : 1, `${label}: attempts as the queue decided`);
    const events = r.events.filter((e) => e.uuid === c.uuid).map((e) => e.event);
    const created = c.action === 'create' ? ['service.created'] : [];
    assert.deepEqual(events, [...created, c.outcome === 'success' ? row.event : 'service.failed'], `${label}: events`);
    if (c.outcome !== 'success') {
      const reason = c.outcome === 'throw' ? 'provider exploded' : JOB_ERRORS.unknown;
      assert.equal(task.lastError, reason, label);
      if (expected.at(-1) === 'failed') assert.equal(service.status_reason, reason, `${label}: the reason is the task's error`);
    }
    const logs = (await r.logs.read({ name: 'StateTableProduct', limit: 1000 })).filter((l) => (l.request as { service_uuid?: string }).service_uuid === c.uuid);
    const retries = logs.filter((l) => (l.response as { retry?: boolean }).retry === true).length;
    assert.equal(retries, c.outcome === 'exhausted' ? 2 : 0, `${label}: one retry log line per failed attempt with tries left`);
  }
  assert.equal(ACTION_TRANSITIONS.create.next, 'processing');
}

describe('the provisioning state table through the lifecycle', () => {
  let redis: { url: string; stop(): Promise<void> } | null = null;
  const cleanups: Array<() => Promise<void> | void> = [];

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await redis?.stop();
  });

  test('embedded queue', async () => {
    const r = await rig();
    cleanups.push(() => {
      r.db.close();
      removeDir(r.dir);
    });
    const queue = createTaskQueue({ url: 'embedded', store: r.taskStore, pollMs: 20 });
    Task.use(queue);
    const workers = await startWorkers({ queue, concurrency: 8, resolve: (uuid) => productFor(r, uuid), logger: pino({ level: 'silent' }) });
    try {
      const cases = await seed(r);
      await drive(r, queue, cases);
      await check(r, cases);
    } finally {
      await workers.stop();
      await queue.stop(1000);
      Task.use(null);
    }
  });

  test('BullMQ queue', async (t) => {
    if (!requireTools(t, ['redis-server'])) return;
    redis ??= await startRedis();
    const r = await rig();
    cleanups.push(() => {
      r.db.close();
      removeDir(r.dir);
    });
    const queue = createTaskQueue({ url: redis.url, store: r.taskStore, pollMs: 20, prefix: 'table-bullmq' });
    Task.use(queue);
    const workers = await startWorkers({ queue, concurrency: 8, resolve: (uuid) => productFor(r, uuid), logger: pino({ level: 'silent' }) });
    try {
      const cases = await seed(r);
      await drive(r, queue, cases);
      await check(r, cases);
    } finally {
      await workers.stop();
      await queue.stop(1000);
      Task.use(null);
    }
  });

  test('remote worker (task records over the worker API)', async (t) => {
    if (!requireTools(t, ['redis-server'])) return;
    redis ??= await startRedis();
    const r = await rig();
    cleanups.push(() => {
      r.db.close();
      removeDir(r.dir);
    });
    // The platform side: its task store behind the worker API routes; its own queue only adds (no job slots).
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    await app.register(workerTaskRoutes({ taskStore: r.taskStore }), { prefix: '/api/worker' });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const platformQueue = createTaskQueue({ url: redis.url, store: r.taskStore, pollMs: 20, prefix: 'table-remote' });
    Task.use(platformQueue);
    // The worker side: BullMQ over the same Redis, every record change a worker API call.
    const api = new WorkerApiClient({ url, token: `vpw_${'0'.repeat(64)}` });
    const remoteStore = new RemoteTaskStore(api);
    const remoteChanges: string[] = [];
    remoteStore.events.on((event) => void remoteChanges.push(event.type));
    const remoteQueue = new BullmqQueue(remoteStore, { url: redis.url, prefix: 'table-remote', pollMs: 20 });
    let workers: Workers | null = null;
    try {
      workers = await startWorkers({ queue: remoteQueue, concurrency: 8, resolve: (uuid) => productFor(r, uuid), logger: pino({ level: 'silent' }) });
      const cases = await seed(r);
      await drive(r, remoteQueue, cases);
      await check(r, cases);
      assert.ok(remoteChanges.includes('finished') && remoteChanges.includes('retrying'), 'the remote queue raises the events too');
    } finally {
      await workers?.stop();
      await remoteQueue.stop(1000);
      await platformQueue.stop(1000);
      Task.use(null);
      await api.close();
      await app.close();
    }
  });
});
