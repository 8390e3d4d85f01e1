// The BullMQ gap: a task record written but its job never added (the process died in between) is found by the
// platform's sweep and enqueued, instead of staying `pending` and holding up the later tasks of its service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createHooks } from '../../hooks.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { systemClock } from '../../shared/clock.ts';
import { ModuleLogRepository } from '../../module/platform/store/query/repositories/module-logs.ts';
import { ServiceLifecycle } from '../../module/platform/services/lifecycle.ts';
import { openPlatformDb } from '../../module/platform/store/db.ts';
import { sqliteQueryStore, type QueryStore } from '../../module/platform/store/query/query-store.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import { StuckServiceSweeper } from '../../module/platform/sweeper.ts';
import { BullmqQueue } from '../../module/task/bullmq.ts';
import { resolveOptions } from '../../module/task/options.ts';
import { TaskStore } from '../../module/task/task-store.ts';
import { until } from '../fixtures/platform/http.ts';
import { removeDir, startRedis, tempDir } from '../fixtures/platform/processes.ts';
import { requireTools } from '../helpers/require-tools.ts';

test('a record whose BullMQ job was never added is enqueued by the sweep; the later task of its service then runs after it', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const dir = tempDir('lost-enqueue');
  const db = openPlatformDb(dir);
  const box = SecretBox.open(dir);
  const query = sqliteQueryStore(db);
  const store = new TaskStore(query, box);
  const logger = pino({ level: 'silent' });
  const services = new ServiceQueries(query, box);
  const lifecycle = new ServiceLifecycle<QueryStore>({
    statuses: (tx) => new ServiceQueries(tx ?? query, box).statusStore(), hooks: createHooks(logger), moduleLogs: new ModuleLogRepository(query), clock: systemClock, logger,
  });
  lifecycle.attach(store.events);
  // The queue's clock (its lost-record check) jumps ahead once the later task was seen held: the lost record is then
  // stale without waiting for it to age on the wall clock.
  let ahead = 0;
  const clock = { now: () => new Date(Date.now() + ahead) };
  const queue = new BullmqQueue(store, { url: redis.url, prefix: 'lost-enqueue', pollMs: 20, lostAfterMs: 300, clock });
  const sweeper = new StuckServiceSweeper({ services, queue, lifecycle, logger });
  const ran: string[] = [];
  queue.register('Step', async (input) => {
    ran.push(String(input.step));
    return { status: 'success' };
  });
  try {
    const productUuid = (await new ProductQueries(query).create('VpnProduct', {})).uuid;
    const { uuid } = await services.create({ product_uuid: productUuid, module_name: 'VpnProduct', service_data: { username: 'lost' } });
    const tags = ['step', `service:${uuid}`];
    // What a process that died between the two steps of BullmqQueue.add leaves behind: the record, no job.
    const lost = await store.insert({ backend: 'bullmq', job: 'Step', queue: 'Module', input: { step: 'first' }, tags, options: resolveOptions({ backoff: 0 }) });
    const later = await queue.add('Step', 'Module', { step: 'second' }, tags, { backoff: 0 });
    await queue.start({ queues: ['Module'], concurrency: 2 });

    // Readiness, not a pause: a worker took the later task's job and put it back to wait (BullMQ's delayed set).
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const jobs = new Queue('Module', { connection, prefix: 'lost-enqueue' });
    try {
      const seen = await until(async () => {
        if (ran.length > 0) return 'ran';
        const job = await jobs.getJob(later.id);
        return job?.processedOn && (await job.getState()) === 'delayed' ? 'held' : undefined;
      }, 30_000, 20);
      assert.equal(seen, 'held', 'a worker saw the later task and held it back');
    } finally {
      await jobs.close();
      connection.disconnect();
    }
    assert.deepEqual(ran, [], 'the later task waits for the lost one (same service)');
    assert.equal((await queue.get(later.id))?.status, 'pending');
    assert.equal((await queue.get(lost.id))?.status, 'pending');
    ahead = 300 + 1;

    // The sweep finds the record without its job (older than lostAfterMs) and adds it; the one with a job is left.
    assert.deepEqual(await sweeper.run(), []);
    assert.deepEqual(await queue.recoverLost(), [], 'a second pass finds nothing more');
    assert.equal((await queue.waitFor(lost.id, 15_000)).status, 'completed');
    assert.equal((await queue.waitFor(later.id, 15_000)).status, 'completed');
    assert.deepEqual(ran, ['first', 'second'], 'in queue order, each once');
  } finally {
    await queue.stop(1000);
    db.close();
    removeDir(dir);
    await redis.stop();
  }
});

test('recoverLost leaves young records alone (their add may still be under way) and records whose job exists', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const dir = tempDir('lost-enqueue-young');
  const db = openPlatformDb(dir);
  const store = new TaskStore(sqliteQueryStore(db), SecretBox.open(dir));
  const queue = new BullmqQueue(store, { url: redis.url, prefix: 'lost-young', pollMs: 20, lostAfterMs: 60_000 });
  const other = new BullmqQueue(store, { url: redis.url, prefix: 'lost-young', pollMs: 20, lostAfterMs: 0 });
  try {
    await store.insert({ backend: 'bullmq', job: 'Step', queue: 'Module', input: { step: 'young' }, tags: [], options: resolveOptions({}) });
    const queued = await queue.add('Step', 'Module', { step: 'queued' }, [], {});
    assert.deepEqual(await queue.recoverLost(), [], 'younger than lostAfterMs');
    await sleep(20);
    const recovered = await other.recoverLost();
    assert.equal(recovered.length, 1, 'only the record without a job');
    assert.notEqual(recovered[0], queued.id);
  } finally {
    await queue.stop(1000);
    await other.stop(1000);
    db.close();
    removeDir(dir);
    await redis.stop();
  }
});
