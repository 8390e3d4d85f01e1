// MarkedCache and markedRead: values answered only at the mark they were read at; a new mark drops them all; a value
// read at a mark the store has moved past is never kept; no mark (PostgreSQL) keeps nothing; bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MarkedCache, markedRead } from '../../../module/platform/store/query/marked-cache.ts';

test('a value is answered at its mark only; the first lookup at a new mark drops every entry', () => {
  const cache = new MarkedCache<string>();
  assert.equal(cache.get('1:0', 'a'), undefined);
  cache.set('1:0', 'a', 'page a');
  assert.equal(cache.get('1:0', 'a'), 'page a');
  assert.equal(cache.get('1:0', 'b'), undefined);
  assert.equal(cache.get('1:1', 'a'), undefined, 'the store changed');
  assert.equal(cache.size, 0);
  assert.equal(cache.get('1:0', 'a'), undefined, 'an old mark never brings an entry back');
});

test('a value read at a mark the cache has moved past is not kept; no mark keeps nothing', () => {
  const cache = new MarkedCache<string>();
  cache.get('1:0', 'a');
  cache.get('2:0', 'b');
  cache.set('1:0', 'a', 'stale');
  assert.equal(cache.size, 0);
  cache.set(undefined, 'a', 'x');
  assert.equal(cache.get(undefined, 'a'), undefined);
  assert.equal(cache.size, 0);
});

test('bounded: the oldest entry goes first', () => {
  const cache = new MarkedCache<number>(2);
  cache.get('m', 'x');
  cache.set('m', 'a', 1);
  cache.set('m', 'b', 2);
  cache.set('m', 'c', 3);
  assert.equal(cache.size, 2);
  assert.equal(cache.get('m', 'a'), undefined);
  assert.equal(cache.get('m', 'c'), 3);
});

test('markedRead reads once per mark, never keeps a null, and reads every time without a mark', async () => {
  let mark: string | undefined = 'm1';
  let reads = 0;
  const cache = new MarkedCache<{ n: number }>();
  const read = async () => ({ n: ++reads });
  assert.deepEqual(await markedRead(mark, cache, 'k', read), { n: 1 });
  assert.deepEqual(await markedRead(mark, cache, 'k', read), { n: 1 });
  mark = 'm2';
  assert.deepEqual(await markedRead(mark, cache, 'k', read), { n: 2 });
  let nulls = 0;
  await markedRead(mark, cache, 'none', async () => (nulls++, null));
  await markedRead(mark, cache, 'none', async () => (nulls++, null));
  assert.equal(nulls, 2);
  mark = undefined;
  await markedRead(mark, cache, 'k', read);
  await markedRead(mark, cache, 'k', read);
  assert.equal(reads, 4);
});
