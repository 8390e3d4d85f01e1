// Queue events from the task store: raised inside the transaction that changed the record, so a listener's writes
// commit with it and a listener's failure rolls the change back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { LOST_WORKER_ERROR, type Settlement } from '../../../module/task/attempt.ts';
import type { TaskEvent } from '../../../module/task/events.ts';
import { resolveOptions } from '../../../module/task/options.ts';
import { TaskStore } from '../../../module/task/task-store.ts';
import { taskQueryStore } from '../../fixtures/task/memory-store.ts';

function store(): { db: Database.Database; store: TaskStore; seen: TaskEvent[] } {
  const db = new Database(':memory:');
  const s = new TaskStore(taskQueryStore(db));
  const seen: TaskEvent[] = [];
  s.events.on((event) => void seen.push(event));
  return { db, store: s, seen };
}

const insert = (s: TaskStore, tries = 2, tags: string[] = []) =>
  s.insert({ backend: 'embedded', job: 'echo', queue: 'Module', input: { n: Math.random() }, tags, options: resolveOptions({ tries, backoff: 0 }) });
const failure = (attempts: number, tries: number): Settlement => ({
  status: attempts >= tries ? 'failed' : 'pending', exceptions: 0, lastError: 'nope', result: null, availableAt: Date.now(),
});

test('insert, settle, release, fail and retry raise one event each', async () => {
  const { store: s, seen } = store();
  const { id } = await insert(s, 2);
  assert.deepEqual(seen.map((e) => e.type), ['queued']);
  await s.claimNext('embedded', 'w', 1000);
  await s.settle(id, 'w', failure(1, 2));
  await s.claimNext('embedded', 'w', 1000);
  await s.settle(id, 'w', failure(2, 2));
  assert.deepEqual(seen.map((e) => (e.type === 'finished' ? `finished:${e.outcome}` : e.type)), ['queued', 'retrying', 'finished:failed']);
  await s.resetForRetry(id, 'embedded');
  assert.deepEqual(seen.at(-1), { type: 'queued', task: (await s.get(id)), requeued: true });
  await s.claimNext('embedded', 'w2', 1);
  const released = (await s.release('embedded', { workerId: 'w2', ids: [id] }));
  assert.deepEqual(released, [id]);
  assert.equal(seen.at(-1)?.type, 'retrying');
  assert.equal((seen.at(-1) as { error: string }).error, LOST_WORKER_ERROR);
  await s.fail(id, 'refused');
  assert.deepEqual(seen.at(-1), { type: 'finished', task: (await s.get(id)), outcome: 'failed', error: 'refused' });
  assert.equal((await s.fail(id, 'again')), null, 'a final record raises nothing more');
  assert.equal(seen.length, 6);
});

test('a duplicate raises nothing; a listener that throws rolls the change back', async () => {
  const { store: s, seen } = store();
  const first = (await s.insert({ backend: 'embedded', job: 'echo', queue: 'Module', input: { a: 1 }, tags: [], options: resolveOptions({}) }));
  const copy = (await s.insert({ backend: 'embedded', job: 'echo', queue: 'Module', input: { a: 1 }, tags: [], options: resolveOptions({}) }));
  assert.equal(copy.status, 'duplicate');
  assert.equal(seen.length, 1);
  s.events.on((event) => {
    if (event.type === 'finished') throw new Error('listener broke');
  });
  await s.claimNext('embedded', 'w', 1000);
  await assert.rejects(s.settle(first.id, 'w', { status: 'completed', exceptions: 0, lastError: null, result: 1, availableAt: Date.now() }), /listener broke/);
  assert.equal((await s.get(first.id))?.status, 'processing', 'the settlement was rolled back with the listener');
});
