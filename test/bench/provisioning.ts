// Benchmark (not a test): 1,000 services provisioned end to end — admin API → task queue → VpnProduct createJob →
// panel (simulated driver) — on the embedded queue and on BullMQ with the store on SQLite, and on BullMQ with the store on
// PostgreSQL (a private server), next to BullMQ's own no-op job rate in this run (issue 22: PostgreSQL ≥ 50 % of SQLite,
// both ≥ 25 % of the no-op floor).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Queue, Worker } from 'bullmq';
import { pino } from 'pino';
import { startPlatform, type RunningPlatform } from '../../module/platform/server.ts';
import { admin } from '../fixtures/platform/http.ts';
import { createServer } from '../fixtures/platform/setup.ts';
import { removeDir, startPanel, startRedis, tempDir, type PanelProcess } from '../fixtures/platform/processes.ts';
import { startPostgres } from '../helpers/postgres-server.ts';
import { pipelineSkeletonRate } from './pipeline-skeleton.ts';
import { cpuByProcess, cpuPerUnit } from './process-cpu.ts';
import { countStatements, statementCounts, statementsPerUnit } from './statement-count.ts';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 32);
const HTTP_PARALLEL = 32;
/** Which runs to make (`embedded,sqlite,postgres`, default all); the no-op floor always runs. */
const RUNS = new Set((process.env.BENCH_RUNS ?? 'embedded,sqlite,postgres').split(','));
/** BENCH_STATEMENTS=1: also print the SQL statements per service of each run (counted in this process) and the top texts. */
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
if (STATEMENTS) countStatements();
/** BENCH_CPU_PROF=PREFIX: a V8 CPU profile of this process over each run's measured part, in PREFIX-<run>.cpuprofile. */
const CPU_PROF = process.env.BENCH_CPU_PROF;

/** Runs `fn` over `items` with at most `limit` in flight. */
async function parallel<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

/** CPU per service of each run, by process (`self` is this one: platform, workers, admin API client). */
const cpuLines: string[] = [];

/** Provisions SERVICES services on `queue`; answers services per second from the first create to the last completion. */
async function provision(p: PanelProcess, queue: string, server: string, store?: string): Promise<number> {
  const dataDir = tempDir('bench-platform');
  let running: RunningPlatform | null = null;
  try {
    running = await startPlatform({
      listen: '127.0.0.1:0', dataDir, store, queue, workers: WORKERS,
      logger: pino({ level: 'warn' }), queueOptions: { pollMs: 50 },
    });
    const { url, platform } = running;
    const token = (await platform.tokens.create('bench')).token;
    const api = (method: string, path: string, body?: unknown) => admin(url, token, method, path, body);
    const reg = await api('POST', '/panels', { location: 'bench', api_url: p.url, access_hash: p.accessHash });
    if (reg.status !== 201) throw new Error(`register panel: ${JSON.stringify(reg.body)}`);
    const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'bench', plan_type: 'basic', bandwidth: 100, wg_server: server } });
    const uuids: string[] = [];
    await parallel(Array.from({ length: SERVICES }, (_, i) => i), HTTP_PARALLEL, async (i) => {
      const svc = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: `${server}_${i}`, password: 'BenchPassw0rd' } });
      if (svc.status !== 201) throw new Error(`service: ${JSON.stringify(svc.body)}`);
      uuids.push(svc.body.uuid);
    });
    const statementsBefore = statementCounts();
    const profiler = CPU_PROF ? new Session() : null;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const cpuBefore = cpuByProcess();
    const usageBefore = process.cpuUsage();
    const started = performance.now();
    await parallel(uuids, HTTP_PARALLEL, async (uuid) => {
      const res = await api('POST', `/services/${uuid}/create`);
      if (res.body?.status !== 'success') throw new Error(`create: ${JSON.stringify(res.body)}`);
    });
    const deadline = Date.now() + 600_000;
    for (;;) {
      const counts = await platform.services.countByStatus();
      if ((counts.completed ?? 0) + (counts.failed ?? 0) >= SERVICES) {
        if (counts.failed) throw new Error(`${counts.failed} services failed`);
        break;
      }
      if (Date.now() > deadline) throw new Error(`timeout: ${JSON.stringify(counts)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const rate = SERVICES / ((performance.now() - started) / 1000);
    if (profiler) {
      const run = store ? 'postgres' : queue === 'embedded' ? 'embedded' : 'sqlite';
      writeFileSync(`${CPU_PROF}-${run}.cpuprofile`, JSON.stringify((await profiler.post('Profiler.stop')).profile));
      profiler.disconnect();
    }
    cpuLines.push(`    ${store ? 'BullMQ + PostgreSQL' : queue === 'embedded' ? 'embedded' : 'BullMQ + SQLite'}: ${cpuPerUnit(cpuBefore, cpuByProcess(), SERVICES)}`);
    const usage = process.cpuUsage(usageBefore);
    cpuLines.push(`      self: user ${(usage.user / 1000 / SERVICES).toFixed(1)} ms, system ${(usage.system / 1000 / SERVICES).toFixed(1)} ms per service`);
    if (STATEMENTS) cpuLines.push(...statementsPerUnit(statementsBefore, SERVICES));
    return rate;
  } finally {
    await running?.close();
    removeDir(dataDir);
  }
}

/** BullMQ alone: SERVICES no-op jobs through one Worker with WORKERS concurrency. */
async function bullmqNoop(url: string): Promise<number> {
  const connection = { url, maxRetriesPerRequest: null } as const;
  const name = `noop-${process.pid}`;
  const queue = new Queue(name, { connection });
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  const worker = new Worker(name, async () => null, { connection, concurrency: WORKERS });
  worker.on('completed', () => {
    if (++done === SERVICES) resolveAll();
  });
  await worker.waitUntilReady();
  const started = performance.now();
  await queue.addBulk(Array.from({ length: SERVICES }, (_, i) => ({ name: 'noop', data: { i } })));
  await all;
  const rate = SERVICES / ((performance.now() - started) / 1000);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return rate;
}

const p = await startPanel({ accounts: SERVICES * 3 + 10 });
const redis = await startRedis();
const pg = await startPostgres();
try {
  await createServer(p, 'bench1', '10.80.0.1/20');
  await createServer(p, 'bench2', '10.96.0.1/20');
  await createServer(p, 'bench3', '10.112.0.1/20');
  const noop = await bullmqNoop(redis.url);
  const skeletonCpu = cpuByProcess();
  const skeleton = await pipelineSkeletonRate(redis.url, SERVICES, WORKERS, HTTP_PARALLEL, () => {
    cpuLines.push(`    pipeline skeleton: ${cpuPerUnit(skeletonCpu, cpuByProcess(), SERVICES)} (\`node\`: the bare panel and the panel)`);
  });
  const embedded = RUNS.has('embedded') ? await provision(p, 'embedded', 'bench1') : NaN;
  const bullmq = RUNS.has('sqlite') ? await provision(p, redis.url, 'bench2') : NaN;
  const onPostgres = RUNS.has('postgres') ? await provision(p, redis.url, 'bench3', await pg.createDatabase('bench_provisioning')) : NaN;
  const fmt = (n: number) => n.toFixed(1).padStart(8);
  const floorShare = (n: number) => `${(n / noop).toFixed(3)} × no-op`;
  process.stdout.write([
    `provisioning benchmark: ${SERVICES} services end to end (admin API → queue → createJob → panel, simulated driver), ${WORKERS} job slots`,
    `  BullMQ no-op jobs (floor):     ${fmt(noop)} jobs/s`,
    `  pipeline skeleton (no store):  ${fmt(skeleton)} services/s   (${floorShare(skeleton)}: the most this pipeline's shape reaches here)`,
    `  embedded queue:                ${fmt(embedded)} services/s   (${(embedded / noop).toFixed(3)} × no-op)`,
    `  BullMQ queue, SQLite store:    ${fmt(bullmq)} services/s   (${floorShare(bullmq)})`,
    `  BullMQ queue, PostgreSQL store:${fmt(onPostgres)} services/s   (${floorShare(onPostgres)}; ${(onPostgres / bullmq).toFixed(3)} × SQLite, target ≥ 0.5 × SQLite: ${onPostgres >= bullmq / 2 ? 'met' : 'NOT met'})`,
    `  ≥ 0.25 × no-op for both stores: ${bullmq >= noop / 4 && onPostgres >= noop / 4 ? 'met' : 'NOT met'}`,
    '  CPU per service, by process (the panel is `node`; less load-sensitive than the rates):',
    ...cpuLines,
    '',
  ].join('\n'));
} finally {
  await pg.stop();
  await redis.stop();
  await p.stop();
  removeDir(p.dataDir);
}
