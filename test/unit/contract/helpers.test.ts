// Guidance helpers: cache (300 s TTL, tags), chunk(items, 100), transaction(db, fn).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { ModuleCache } from '../../../module/contract/cache.ts';
import { chunk } from '../../../module/contract/chunk.ts';
import { transaction } from '../../../module/platform/store/transaction.ts';
import { ManualClock, makePlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

test('cache entries live 300 s by default', () => {
  const clock = new ManualClock();
  const cache = new ModuleCache(clock);
  cache.set('a', 1);
  clock.advance(299);
  assert.equal(cache.get('a'), 1);
  clock.advance(1);
  assert.equal(cache.get('a'), undefined);
  cache.set('b', 2, { ttlSeconds: 5 });
  clock.advance(5);
  assert.equal(cache.has('b'), false);
});

test('invalidateTag drops exactly the tagged entries', () => {
  const cache = new ModuleCache(new ManualClock());
  cache.set('x:1', 1, { tags: ['module', 'X'] });
  cache.set('y:1', 2, { tags: ['module', 'Y'] });
  cache.set('plain', 3);
  assert.equal(cache.invalidateTag('X'), 1);
  assert.deepEqual([cache.get('x:1'), cache.get('y:1'), cache.get('plain')], [undefined, 2, 3]);
  assert.equal(cache.invalidateTag('module'), 1);
  assert.equal(cache.size, 1);
});

test('remember computes once per TTL, shares concurrent computations and does not cache failures', async () => {
  const clock = new ManualClock();
  const cache = new ModuleCache(clock);
  let runs = 0;
  const compute = async () => ++runs;
  const [a, b] = await Promise.all([cache.remember('k', [], compute), cache.remember('k', [], compute)]);
  assert.deepEqual([a, b, runs], [1, 1, 1]);
  assert.equal(await cache.remember('k', [], compute), 1);
  clock.advance(300);
  assert.equal(await cache.remember('k', [], compute), 2);
  await assert.rejects(cache.remember('bad', [], async () => Promise.reject(new Error('boom'))), /boom/);
  assert.equal(await cache.remember('bad', [], () => 'fine'), 'fine');
});

test('module.cached keys by module name with tags module + name; forgetCached invalidates', async () => {
  const p = makePlatform();
  try {
    const product = new SampleProduct(p.ctx);
    let lookups = 0;
    const lookup = () => product.cached('servers', async () => ++lookups);
    assert.equal(await lookup(), 1);
    assert.equal(await lookup(), 1);
    assert.equal(p.ctx.cache!.get('SampleProduct:servers'), 1);
    p.clock.advance(300);
    assert.equal(await lookup(), 2);
    assert.equal(product.forgetCached(), 1);
    assert.equal(await lookup(), 3);
    assert.equal(p.ctx.cache!.invalidateTag('module'), 1);
  } finally {
    p.cleanup();
  }
});

test('chunk splits into groups of 100 by default', () => {
  const items = Array.from({ length: 250 }, (_, i) => i);
  assert.deepEqual(chunk(items).map((c) => c.length), [100, 100, 50]);
  assert.deepEqual(chunk(items)[2][0], 200);
  assert.deepEqual(chunk([], 3), []);
  assert.deepEqual(chunk([1, 2, 3], 2), [[1, 2], [3]]);
  assert.throws(() => chunk([1], 0), RangeError);
});

test('transaction commits on return and rolls back every step on a throw', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v INTEGER)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  assert.equal(transaction(db, () => (insert.run(1), insert.run(2), 'done')), 'done');
  assert.throws(() => transaction(db, () => {
    insert.run(3);
    throw new Error('step 2 failed');
  }), /step 2 failed/);
  assert.throws(() => transaction(db, (() => {
    insert.run(4);
    return Promise.resolve();
  }) as () => unknown), /must be synchronous/);
  assert.deepEqual(db.prepare('SELECT v FROM t ORDER BY v').all(), [{ v: 1 }, { v: 2 }]);
  db.close();
});
