// Statements compiled once (store-kernel/compiled-statement.ts) and rows written in batches (insert-batcher.ts), on an
// in-memory SQLite database: values land where the build put them, the same text serves every run, a value left unbound
// is refused; rows added together or while a batch is on its way go in one INSERT, in order, and a failed batch
// rejects each of its rows (gathering a turn: every row added until the event loop's next turn); a compiled write run
// by a transaction's store is part of that transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { CompiledStatement } from '../../../module/store-kernel/compiled-statement.ts';
import { InsertBatcher } from '../../../module/platform/store/query/insert-batcher.ts';
import { sqliteQueryStore } from '../../../module/platform/store/query/query-store.ts';

function memoryStore() {
  const handle = new Database(':memory:');
  handle.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT, made TEXT, changed TEXT)');
  return { handle, store: sqliteQueryStore(handle as never) };
}

test('a compiled statement binds its values where the build used them, once compiled for every run', async () => {
  const { handle, store } = memoryStore();
  let builds = 0;
  const insert = new CompiledStatement<{ name: string; note: string | null; at: string }, { id: number }>((on, v) => {
    builds++;
    return on.db.insertInto('items').values({ name: v.name, note: v.note, made: v.at, changed: v.at }).returning('id');
  });
  const read = new CompiledStatement<{ name: string }, { name: string; note: string | null }>((on, v) =>
    on.db.selectFrom('items').select(['name', 'note']).where('name', '=', v.name).where('id', '>', 0));
  assert.equal((await insert.first(store, { name: 'one', note: null, at: 'T1' }))?.id, 1);
  assert.equal((await insert.first(store, { name: 'two', note: 'n', at: 'T2' }))?.id, 2);
  assert.equal(builds, 1);
  assert.deepEqual(handle.prepare('SELECT made, changed FROM items ORDER BY id').all(), [{ made: 'T1', changed: 'T1' }, { made: 'T2', changed: 'T2' }]);
  assert.deepEqual(await read.first(store, { name: 'two' }), { name: 'two', note: 'n' });
  assert.equal(await store.transaction((tx) => read.first(tx, { name: 'one' }).then((row) => row?.note)), null, 'inside a transaction too');
  const unbound = new CompiledStatement<{ name: string }, unknown>((on, v) => on.db.selectFrom('items').select(sql`${sql.lit(v.name)}`.as('x')));
  await assert.rejects(unbound.execute(store, { name: 'x' }), /must bind every value it reads/);
  handle.close();
});

test('an insert batcher writes rows added together, and rows added while a batch is on its way, one INSERT each', async () => {
  const batches: string[][] = [];
  let release!: () => void;
  let gate: Promise<void> = new Promise((resolve) => (release = resolve));
  const batcher = new InsertBatcher<string>(async (rows) => {
    batches.push(rows);
    await gate;
    if (rows.includes('bad')) throw new Error('refused');
  }, 3);
  const first = [batcher.add('a'), batcher.add('b')];
  await new Promise((resolve) => setImmediate(resolve));
  const waiting = ['c', 'd', 'e', 'f'].map((row) => batcher.add(row));
  release();
  gate = Promise.resolve();
  await Promise.all([...first, ...waiting]);
  assert.deepEqual(batches, [['a', 'b'], ['c', 'd', 'e'], ['f']]);
  const failed = [batcher.add('ok'), batcher.add('bad')];
  for (const result of await Promise.allSettled(failed)) assert.equal(result.status, 'rejected');
  await batcher.add('after');
  assert.deepEqual(batches.at(-1), ['after']);
});

test('a compiled write inside a transaction is part of it (read back in it, undone by its rollback); outside one it commits at once', async () => {
  const { handle, store } = memoryStore();
  const insert = new CompiledStatement<{ name: string }, never>((on, v) => on.db.insertInto('items').values({ name: v.name }));
  const count = new CompiledStatement<Record<string, never>, { n: number }>((on) => on.db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')));
  const inserted = await insert.execute(store, { name: 'alone' });
  assert.equal(Number(inserted.numAffectedRows), 1);
  assert.equal(handle.inTransaction, false);
  await assert.rejects(store.transaction(async (tx) => {
    await insert.execute(tx, { name: 'undone' });
    assert.equal(handle.inTransaction, true);
    assert.equal((await count.first(tx, {}))?.n, 2, 'the transaction reads its own write');
    throw new Error('roll back');
  }), /roll back/);
  assert.deepEqual(handle.prepare('SELECT name FROM items ORDER BY id').all(), [{ name: 'alone' }]);
  let kept!: typeof store;
  await store.transaction(async (tx) => {
    kept = tx;
    await insert.execute(tx, { name: 'kept' });
  });
  assert.deepEqual(handle.prepare('SELECT name FROM items ORDER BY id').all(), [{ name: 'alone' }, { name: 'kept' }]);
  assert.equal(kept.runNow(sql`INSERT INTO items (name) VALUES ('late')`.compile(store.db)), undefined, 'a transaction that ended runs nothing at once');
  handle.close();
});

test('an insert batcher gathering a turn writes the rows added until the next turn of the event loop in one INSERT', async () => {
  const batches: string[][] = [];
  const batcher = new InsertBatcher<string>(async (rows) => void batches.push(rows), 200, 'turn');
  const added = [batcher.add('a')];
  await Promise.resolve();
  added.push(batcher.add('b'));
  await new Promise<void>((resolve) => process.nextTick(resolve));
  added.push(batcher.add('c'));
  assert.deepEqual(batches, [], 'nothing written before the turn ends');
  await Promise.all(added);
  assert.deepEqual(batches, [['a', 'b', 'c']]);
});
