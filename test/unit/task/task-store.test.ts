// Task store: redaction of the stored input, sealing of the raw input, atomic dedupe, claims and crash release.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SecretBox } from '../../../panel/shared/secret-box.ts';
import { LOST_WORKER_ERROR } from '../../../module/task/attempt.ts';
import { resolveOptions } from '../../../module/task/options.ts';
import { migrateTaskStore, SECRET_NEEDS_BOX_ERROR, TaskStore } from '../../../module/task/task-store.ts';

function memoryStore(box?: SecretBox): { db: Database.Database; store: TaskStore } {
  const db = new Database(':memory:');
  migrateTaskStore(db);
  migrateTaskStore(db);
  return { db, store: new TaskStore(db, box) };
}

const task = (input: Record<string, unknown>, tags: string[] = []) => ({
  backend: 'embedded' as const, job: 'echo', queue: 'Module', input, tags, options: resolveOptions({ tries: 2 }),
});

test('the stored input is redacted; the raw input is sealed and only opened for the worker', () => {
  const { db, store } = memoryStore(SecretBox.fromKey(randomBytes(32)));
  const input = { username: 'alice', password: 'Str0ng-Passw0rd', nested: { api_key: 'k-123456' } };
  const { id } = store.insert(task(input));
  const row = db.prepare('SELECT input, raw_input, dedupe_key FROM tasks WHERE id = ?').get(id) as { input: string; raw_input: string; dedupe_key: string };
  assert.deepEqual(JSON.parse(row.input), { username: 'alice', password: '[redacted]', nested: { api_key: '[redacted]' } });
  assert.ok(SecretBox.isSealed(row.raw_input));
  assert.ok(!JSON.stringify(db.prepare('SELECT * FROM tasks').all()).includes('Str0ng-Passw0rd'));
  assert.deepEqual(store.get(id)?.input.password, '[redacted]');
  assert.deepEqual(store.claimNext('embedded', 'w1', 1000)?.rawInput, input);
  const pepper = db.prepare("SELECT value FROM task_meta WHERE key = 'dedupe_pepper'").get() as { value: string };
  assert.ok(SecretBox.isSealed(pepper.value));
});

test('input without secrets needs no box; input with secrets is refused without one', () => {
  const { db, store } = memoryStore();
  const { id } = store.insert(task({ username: 'bob' }));
  assert.equal((db.prepare('SELECT raw_input FROM tasks WHERE id = ?').get(id) as { raw_input: string | null }).raw_input, null);
  assert.throws(() => store.insert(task({ password: 'Secret-123' })), new RegExp(SECRET_NEEDS_BOX_ERROR));
});

test('an identical pending task is a duplicate; tags are indexed', () => {
  const { store } = memoryStore();
  const first = store.insert(task({ a: 1 }, ['create', 'service:x']));
  const second = store.insert(task({ a: 1 }, ['service:x', 'create']));
  assert.equal(first.status, 'pending');
  assert.equal(second.status, 'duplicate');
  assert.equal(store.get(second.id)?.duplicateOf, first.id);
  assert.ok(store.get(second.id)?.finishedAt);
  assert.deepEqual(store.list({ tag: 'service:x' }).map((r) => r.id).sort(), [first.id, second.id].sort());
  assert.deepEqual(store.list({ tag: 'service:x', status: 'pending' }).map((r) => r.id), [first.id]);
});

test('a task overtaken by a later one sharing a tag is not a duplicate: the newest intent always runs', () => {
  const { store } = memoryStore();
  const suspend = store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x']));
  const unsuspend = store.insert(task({ m: 'unsuspendJob' }, ['unsuspend', 'service:x']));
  assert.equal(unsuspend.status, 'pending');
  const again = store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x']));
  assert.equal(again.status, 'pending', 'unsuspend was queued after the first suspend');
  const repeat = store.insert(task({ m: 'suspendJob' }, ['suspend', 'service:x']));
  assert.equal(repeat.status, 'duplicate');
  assert.equal(store.get(repeat.id)?.duplicateOf, again.id, 'the newest identical task is the original');
  assert.equal(store.list({ tag: 'service:x', status: 'pending' }).length, 3);
  assert.notEqual(suspend.id, again.id);
});

test('two connections on one file never claim the same task; an expired lease is released per tries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-taskstore-'));
  const a = new Database(join(dir, 'db.sqlite'));
  const b = new Database(join(dir, 'db.sqlite'));
  try {
    a.pragma('journal_mode = WAL');
    migrateTaskStore(a);
    const storeA = new TaskStore(a);
    const storeB = new TaskStore(b);
    const ids = [storeA.insert(task({ n: 1 })).id, storeA.insert(task({ n: 2 })).id];
    const claims = [storeA.claimNext('embedded', 'A', 10), storeB.claimNext('embedded', 'B', 10), storeA.claimNext('embedded', 'A', 10)];
    assert.deepEqual(claims.slice(0, 2).map((c) => c?.record.id).sort(), [...ids].sort());
    assert.equal(claims[2], null);
    const started = Date.now();
    while (Date.now() - started < 20) {
      // let both 10 ms leases expire
    }
    assert.deepEqual(storeB.release('embedded', { expired: true }).sort(), [...ids].sort());
    const again = storeA.get(ids[0]);
    assert.equal(again?.status, 'pending');
    assert.equal(again?.lastError, LOST_WORKER_ERROR);
    storeA.claimNext('embedded', 'A', 10);
    storeA.claimNext('embedded', 'A', 10);
    assert.deepEqual(storeA.release('embedded', { workerId: 'A', ids }).sort(), [...ids].sort());
    assert.equal(storeA.get(ids[0])?.status, 'failed', 'no tries left after the second lost attempt');
    assert.equal(storeA.get(ids[0])?.attempts, 2);
  } finally {
    a.close();
    b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
