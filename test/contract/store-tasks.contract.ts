// Contract suite of the task records on the query layer (TaskStore over SQLite and PostgreSQL): insert and dedupe, claim,
// lease expiry, settlement, failure and retry, the per-service order, the events' transaction, and the conditional
// writes several processes race for (two claimers, two identical inserts: one wins).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { manualClock } from '../../shared/clock.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { LOST_WORKER_ERROR } from '../../module/task/attempt.ts';
import { resolveOptions } from '../../module/task/options.ts';
import { TaskStore } from '../../module/task/task-store.ts';
import type { TaskInsert } from '../../module/task/task-record-store.ts';
import type { OpenStore } from './store.contract.ts';

type Clock = ReturnType<typeof manualClock>;

async function withTasks(t: TestContext, open: OpenStore, body: (tasks: TaskStore<QueryStore>, clock: Clock, store: QueryStore) => Promise<void>): Promise<void> {
  const opened = await open(t);
  if (!opened) return;
  try {
    const clock = manualClock(new Date('2026-11-27T10:00:00.000Z'));
    await body(new TaskStore(opened.store, SecretBox.fromKey(randomBytes(32)), clock), clock, opened.store);
  } finally {
    await opened.close();
  }
}

const task = (input: Record<string, unknown>, tags: string[] = [], tries = 2): TaskInsert => ({
  backend: 'embedded', job: 'echo', queue: 'Module', input, tags, options: resolveOptions({ tries, backoff: 0 }),
});
const done = (clock: Clock) => ({ status: 'completed' as const, exceptions: 0, lastError: null, result: { ok: true }, availableAt: clock.now().getTime() });

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract, task records: ${engine}`, () => {
    test('insert keeps the input redacted and the raw input sealed; an identical runnable task is a duplicate; tags list', (t) => withTasks(t, open, async (tasks, _clock, store) => {
      const first = await tasks.insert(task({ username: 'ann', password: 'S3cret-pass' }, ['create', 'service:a']));
      const copy = await tasks.insert(task({ username: 'ann', password: 'S3cret-pass' }, ['service:a', 'create']));
      assert.deepEqual([first.status, copy.status], ['pending', 'duplicate']);
      assert.equal((await tasks.get(copy.id))?.duplicateOf, first.id);
      assert.equal((await tasks.get(first.id))?.input.password, '[redacted]');
      const row = await store.db.selectFrom('tasks').select('raw_input').where('id', '=', first.id).executeTakeFirstOrThrow();
      assert.ok(row.raw_input !== null && SecretBox.isSealed(row.raw_input));
      assert.deepEqual((await tasks.list({ tag: 'service:a' })).map((r) => r.id).sort(), [first.id, copy.id].sort());
      assert.deepEqual((await tasks.list({ tag: 'service:a', status: 'pending' })).map((r) => r.id), [first.id]);
      const claimed = await tasks.claimNext('embedded', 'w', 1000);
      assert.equal(claimed?.rawInput.password, 'S3cret-pass', 'the worker gets the raw input');
    }));

    test('claim, complete; lease expiry releases per tries; fail; retry queues a failed task again', (t) => withTasks(t, open, async (tasks, clock) => {
      const { id } = await tasks.insert(task({ n: 1 }));
      const claimed = await tasks.claimNext('embedded', 'w1', 1000);
      assert.equal(claimed?.record.status, 'processing');
      assert.equal(await tasks.claimNext('embedded', 'w2', 1000), null, 'nothing else due');
      assert.equal(await tasks.settle(id, 'w2', done(clock)), null, 'only the holder settles');
      assert.equal((await tasks.settle(id, 'w1', done(clock)))?.status, 'completed');

      const second = await tasks.insert(task({ n: 2 }));
      await tasks.claimNext('embedded', 'w1', 1000);
      await tasks.heartbeat('w1', 5000);
      clock.advance(2000);
      assert.deepEqual(await tasks.release('embedded', { expired: true }), [], 'the heartbeat extended the lease');
      clock.advance(4000);
      assert.deepEqual(await tasks.release('embedded', { expired: true }), [second.id]);
      const released = await tasks.get(second.id);
      assert.deepEqual([released?.status, released?.lastError], ['pending', LOST_WORKER_ERROR]);
      await tasks.claimNext('embedded', 'w1', 1000);
      clock.advance(2000);
      assert.deepEqual(await tasks.release('embedded', { expired: true }), [second.id]);
      assert.equal((await tasks.get(second.id))?.status, 'failed', 'no tries left after the second lost attempt');

      await assert.rejects(tasks.resetForRetry(id, 'embedded'), /is not failed/);
      const again = await tasks.resetForRetry(second.id, 'embedded');
      assert.deepEqual([again.status, again.attempts, again.retries], ['pending', 0, 1]);
      assert.equal((await tasks.fail(second.id, 'refused'))?.status, 'failed');
      assert.equal(await tasks.fail(second.id, 'again'), null, 'a final record stays as it is');
      assert.deepEqual(await tasks.activeQueues('embedded'), []);
    }));

    test('a later task of the same service waits for the earlier one; other services run meanwhile', (t) => withTasks(t, open, async (tasks, clock) => {
      const first = await tasks.insert(task({ m: 'create' }, ['create', 'service:s1']));
      const later = await tasks.insert(task({ m: 'suspend' }, ['suspend', 'service:s1']));
      const other = await tasks.insert(task({ m: 'create' }, ['create', 'service:s2']));
      const a = await tasks.claimNext('embedded', 'w', 1000);
      const b = await tasks.claimNext('embedded', 'w', 1000);
      assert.deepEqual([a?.record.id, b?.record.id], [first.id, other.id]);
      assert.equal(await tasks.claimNext('embedded', 'w', 1000), null, 'the suspend waits for the create');
      await tasks.settle(first.id, 'w', done(clock));
      assert.equal((await tasks.claimNext('embedded', 'w', 1000))?.record.id, later.id);
      assert.equal(await tasks.claimNext('embedded', 'w', 1000, ['Other']), null, 'a queue filter');
    }));

    test('BullMQ attempts: beginAttempt blocks behind an earlier task, counts a lost attempt, fails without tries', (t) => withTasks(t, open, async (tasks) => {
      const bull = (input: Record<string, unknown>, tags: string[]) => ({ ...task(input, tags, 2), backend: 'bullmq' as const });
      const first = await tasks.insert(bull({ m: 1 }, ['create', 'service:b']));
      const later = await tasks.insert(bull({ m: 2 }, ['suspend', 'service:b']));
      assert.equal(await tasks.beginAttempt(later.id, 'w', 1000), 'blocked');
      const begun = await tasks.beginAttempt(first.id, 'w', 1000);
      assert.equal(begun !== 'blocked' && begun?.record.attempts, 1);
      const retaken = await tasks.beginAttempt(first.id, 'w2', 1000);
      assert.equal(retaken !== 'blocked' && retaken?.record.lastError, LOST_WORKER_ERROR, 'the lost attempt counts');
      assert.equal(await tasks.beginAttempt(first.id, 'w3', 1000), null, 'no tries left: failed');
      assert.equal((await tasks.get(first.id))?.status, 'failed');
      assert.deepEqual(await tasks.activeQueues('bullmq'), ['Module']);
    }));

    test('events run inside the change\'s transaction: a listener\'s write commits with it, a throw undoes both (all or nothing)', (t) => withTasks(t, open, async (tasks, clock, store) => {
      const { id } = await tasks.insert(task({ n: 1 }));
      await tasks.claimNext('embedded', 'w', 1000);
      let committed = 0;
      const off = tasks.events.on(async (event, context) => {
        await context.tx!.db.insertInto('task_meta').values({ key: `seen:${event.type}`, value: '1' }).execute();
        context.afterCommit(() => void committed++);
        if (event.type === 'finished') throw new Error('listener broke');
      });
      await assert.rejects(tasks.settle(id, 'w', done(clock)), /listener broke/);
      assert.equal((await tasks.get(id))?.status, 'processing', 'the settlement was rolled back');
      assert.equal(await store.db.selectFrom('task_meta').select('key').where('key', '=', 'seen:finished').executeTakeFirst(), undefined);
      assert.equal(committed, 0, 'nothing runs after a rollback');
      off();
      tasks.events.on(async (event, context) => {
        await context.tx!.db.insertInto('task_meta').values({ key: `seen:${event.type}`, value: '1' }).execute();
        context.afterCommit(() => void committed++);
      });
      await tasks.settle(id, 'w', done(clock));
      assert.ok(await store.db.selectFrom('task_meta').select('key').where('key', '=', 'seen:finished').executeTakeFirst());
      assert.equal(committed, 1);
    }));

    test('once: two concurrent claimers of one task, one wins; two identical concurrent inserts, one runs', (t) => withTasks(t, open, async (tasks) => {
      const { id } = await tasks.insert(task({ n: 1 }));
      const claims = await Promise.all([tasks.claimNext('embedded', 'a', 1000), tasks.claimNext('embedded', 'b', 1000)]);
      assert.deepEqual(claims.filter((c) => c !== null).map((c) => c!.record.id), [id]);
      const added = await Promise.all([tasks.insert(task({ same: true }, ['service:x'])), tasks.insert(task({ same: true }, ['service:x']))]);
      assert.deepEqual(added.map((a) => a.status).sort(), ['duplicate', 'pending']);
      const many = await Promise.all(Array.from({ length: 6 }, (_, i) => tasks.insert(task({ i }))));
      const claimers = await Promise.all(Array.from({ length: 8 }, (_, i) => tasks.claimNext('embedded', `c${i}`, 1000)));
      const won = claimers.filter((c) => c !== null).map((c) => c!.record.id);
      assert.equal(new Set(won).size, won.length, 'no task claimed twice');
      assert.equal(won.length, 7, 'the six new tasks and the one runnable copy, each by one claimer');
      assert.ok(many.every((m) => won.includes(m.id)));
    }));

    test('once: concurrent inserts of one input or one service are ordered; of identical ones one runs, the rest name it', (t) => withTasks(t, open, async (tasks, _clock, store) => {
      const added = await Promise.all(Array.from({ length: 8 }, (_, i) => tasks.insert(i % 2 === 0 ? task({ same: true }, ['notification']) : task({ other: i }, [`service:z${i}`]))));
      const identical = added.filter((_, i) => i % 2 === 0);
      const runs = identical.filter((a) => a.status === 'pending');
      assert.equal(runs.length, 1, 'one of the four identical inserts runs');
      for (const copy of identical.filter((a) => a.status === 'duplicate')) assert.equal((await tasks.get(copy.id))?.duplicateOf, runs[0].id);
      assert.ok(added.filter((_, i) => i % 2 === 1).every((a) => a.status === 'pending'));
      const seqOf = async (ids: string[]) => (await store.db.selectFrom('tasks').select('seq').where('id', 'in', ids).execute()).map((row) => Number(row.seq));
      const identicalSeqs = await seqOf(identical.map((a) => a.id));
      assert.equal(new Set(identicalSeqs).size, identical.length, 'each identical insert has its own place in the write order');
      const original = Number((await store.db.selectFrom('tasks').select('seq').where('id', '=', runs[0].id).executeTakeFirstOrThrow()).seq);
      assert.equal(original, Math.min(...identicalSeqs), 'the one that runs was written first');
      const serviceTasks = await Promise.all(Array.from({ length: 6 }, (_, i) => tasks.insert({ ...task({ step: i }, ['service:ordered']), queue: 'Ordered' })));
      const stored = await store.db.selectFrom('tasks').select(['id', 'seq']).where('id', 'in', serviceTasks.map((a) => a.id)).execute();
      assert.equal(new Set(stored.map((row) => Number(row.seq))).size, serviceTasks.length, 'the tasks of one service each have their own place');
      const first = stored.reduce((a, b) => (Number(a.seq) < Number(b.seq) ? a : b));
      const claimed = await tasks.claimNext('embedded', 'w', 1000, ['Ordered']);
      assert.equal(claimed?.record.id, first.id, 'of one service only the earliest is runnable');
      assert.equal(await tasks.claimNext('embedded', 'w2', 1000, ['Ordered']), null, 'the later ones wait for it');
    }));
  });
}
