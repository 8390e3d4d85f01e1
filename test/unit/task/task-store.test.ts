// Task store: redaction of the stored input, sealing of the raw input, atomic dedupe, claims and crash release.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SecretBox } from '../../../shared/secret-box.ts';
import { manualClock } from '../../../shared/clock.ts';
import { LOST_WORKER_ERROR } from '../../../module/task/attempt.ts';
import { resolveOptions } from '../../../module/task/options.ts';
import { SECRET_NEEDS_BOX_ERROR, TaskStore } from '../../../module/task/task-store.ts';
import { taskQueryStore } from '../../fixtures/task/memory-store.ts';

function memoryStore(box?: SecretBox): { db: Database.Database; store: TaskStore } {
  const db = new Database(':memory:');
  taskQueryStore(db);
  return { db, store: new TaskStore(taskQueryStore(db), box) };
}

const task = (input: Record<string, unknown>, tags: string[] = []) => ({
  backend: 'embedded' as const, job: 'echo', queue: 'Module', input, tags, options: resolveOptions({ tries: 2 }),
});

test('the stored input is redacted; the raw input is sealed and only opened for the worker', async () => {
  const { db, store } = memoryStore(SecretBox.fromKey(randomBytes(32)));
  const input = { username: 'alice', password: 'Str0ng-Passw0rd', nested: { api_key: 'k-123456' } };
  const { id } = (await store.insert(task(input)));
  const row = db.prepare('SELECT input, raw_input, dedupe_key FROM tasks WHERE id = ?').get(id) as { input: string; raw_input: string; dedupe_key: string };
  assert.deepEqual(JSON.parse(row.input), { username: 'alice', password: '[redacted]', nested: { api_key: '[redacted]' } });
  assert.ok(SecretBox.isSealed(row.raw_input));
  assert.ok(!JSON.stringify(db.prepare('SELECT * FROM tasks').all()).includes('Str0ng-Passw0rd'));
  assert.deepEqual((await store.get(id))?.input.password, '[redacted]');
  assert.deepEqual((await store.claimNext('embedded', 'w1', 1000))?.rawInput, input);
  const pepper = db.prepare("SELECT value FROM task_meta WHERE key = 'dedupe_pepper'").get() as { value: string };
  assert.ok(SecretBox.isSealed(pepper.value));
});

test('input without secrets needs no box; input with secrets is refused without one', async () => {
  const { db, store } = memoryStore();
  const { id } = (await store.insert(task({ username: 'bob' })));
  assert.equal((db.prepare('SELECT raw_input FROM tasks WHERE id = ?').get(id) as { raw_input: string | null }).raw_input, null);
  await assert.rejects(store.insert(task({ password: 'Secret-123' })), new RegExp(SECRET_NEEDS_BOX_ERROR));
});

test('an identical pending task is a duplicate; tags are indexed', async () => {
  const { store } = memoryStore();
  const first = (await store.insert(task({ a: 1 }, ['create', 'service:x'])));
  const second = (await store.insert(task({ a: 1 }, ['service:x', 'create'])));
  assert.equal(first.status, 'pending');
  assert.equal(second.status, 'duplicate');
  assert.equal((await store.get(second.id))?.duplicateOf, first.id);
  assert.ok((await store.get(second.id))?.finishedAt);
  assert.deepEqual((await store.list({ tag: 'service:x' })).map((r) => r.id).sort(), [first.id, second.id].sort());
  assert.deepEqual((await store.list({ tag: 'service:x', status: 'pending' })).map((r) => r.id), [first.id]);
});

test('a task overtaken by a later one sharing a tag is not a duplicate: the newest intent always runs', async () => {
  const { store } = memoryStore();
  const suspend = (await store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x'])));
  const unsuspend = (await store.insert(task({ m: 'unsuspendJob' }, ['unsuspend', 'service:x'])));
  assert.equal(unsuspend.status, 'pending');
  const again = (await store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x'])));
  assert.equal(again.status, 'pending', 'unsuspend was queued after the first suspend');
  const repeat = (await store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x'])));
  assert.equal(repeat.status, 'duplicate');
  assert.equal((await store.get(repeat.id))?.duplicateOf, again.id, 'the newest identical task is the original');
  assert.equal((await store.list({ tag: 'service:x', status: 'pending' })).length, 3);
  assert.notEqual(suspend.id, again.id);
});

test('back-to-back identical inserts of one service: the first runs, every later one names it (a duplicate undoes nothing)', async () => {
  const { store } = memoryStore();
  const added = [];
  for (let i = 0; i < 5; i++) added.push(await store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x'])));
  assert.deepEqual(added.map((a) => a.status), ['pending', 'duplicate', 'duplicate', 'duplicate', 'duplicate']);
  for (const copy of added.slice(1)) assert.equal((await store.get(copy.id))?.duplicateOf, added[0].id);
});

test('two connections on one file never claim the same task; an expired lease is released per tries', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-taskstore-'));
  const a = new Database(join(dir, 'db.sqlite'));
  const b = new Database(join(dir, 'db.sqlite'));
  try {
    a.pragma('journal_mode = WAL');
    const clock = manualClock(new Date('2026-11-27T10:00:00.000Z')); // both connections' time, moved by hand
    const storeA = new TaskStore(taskQueryStore(a), undefined, clock);
    const storeB = new TaskStore(taskQueryStore(b), undefined, clock);
    const ids = [(await storeA.insert(task({ n: 1 }))).id, (await storeA.insert(task({ n: 2 }))).id];
    const claims = [(await storeA.claimNext('embedded', 'A', 10)), (await storeB.claimNext('embedded', 'B', 10)), (await storeA.claimNext('embedded', 'A', 10))];
    assert.deepEqual(claims.slice(0, 2).map((c) => c?.record.id).sort(), [...ids].sort());
    assert.equal(claims[2], null);
    clock.advance(20); // both 10 ms leases expire
    assert.deepEqual((await storeB.release('embedded', { expired: true })).sort(), [...ids].sort());
    const again = (await storeA.get(ids[0]));
    assert.equal(again?.status, 'pending');
    assert.equal(again?.lastError, LOST_WORKER_ERROR);
    await storeA.claimNext('embedded', 'A', 10);
    await storeA.claimNext('embedded', 'A', 10);
    assert.deepEqual((await storeA.release('embedded', { workerId: 'A', ids })).sort(), [...ids].sort());
    assert.equal((await storeA.get(ids[0]))?.status, 'failed', 'no tries left after the second lost attempt');
    assert.equal((await storeA.get(ids[0]))?.attempts, 2);
  } finally {
    a.close();
    b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
