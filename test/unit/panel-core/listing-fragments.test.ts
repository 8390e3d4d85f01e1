// The listings' fragment arena: bytes equal to JSON.stringify of the same values, keyed and not, across chunk
// boundaries and compactions; a listing being sent keeps what it started with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHUNK, FragmentArena, type JsonBody } from '../../../panel/services/listing-fragments.ts';

const text = (body: JsonBody): string => {
  const bytes = Buffer.concat([...body.chunks()]);
  assert.equal(bytes.length, body.length, 'length announced = bytes sent');
  return bytes.toString('utf8');
};
const value = (id: number) => ({ name: `n${id}`, note: 'é'.repeat(id % 7), pad: 'x'.repeat(id % 400) });

test('array and keyed object listings equal JSON.stringify, in the given order, absent ids left out', () => {
  const arena = new FragmentArena();
  const ids = Array.from({ length: 3000 }, (_, i) => i + 1);
  for (const id of ids) arena.put(id, JSON.stringify(`n${id}`), JSON.stringify(value(id)));
  const order = [...ids].reverse().concat([99_999]);
  const array = text(arena.body(order, false, '{"msg":[', ']}'));
  assert.ok(array.length > 2 * CHUNK, 'spans several chunks');
  assert.equal(array, JSON.stringify({ msg: [...ids].reverse().map(value) }));
  const object = text(arena.body(ids, true, '{', '}'));
  assert.equal(object, JSON.stringify(Object.fromEntries(ids.map((id) => [`n${id}`, value(id)]))));
  assert.equal(text(arena.body([], false, '[', ']')), '[]');
});

test('entries written again and dropped: the listing follows, the buffer is compacted, a listing in flight is unchanged', () => {
  const arena = new FragmentArena();
  for (let id = 1; id <= 500; id++) arena.put(id, `"k${id}"`, JSON.stringify({ v: id }));
  const before = arena.body([1, 2, 3], false, '[', ']');
  const chunks = before.chunks();
  for (let round = 0; round < 50; round++) {
    for (let id = 1; id <= 500; id++) arena.put(id, `"k${id}"`, JSON.stringify({ v: id, round, pad: 'y'.repeat(200) }));
  }
  arena.forget(2);
  assert.equal(arena.size, 499);
  assert.ok(arena.capacity < 4 * 500 * 260, `compacted: ${arena.capacity} bytes for 499 entries of about 250`);
  assert.equal(Buffer.concat([...chunks]).toString(), '[{"v":1},{"v":2},{"v":3}]', 'taken before the writes');
  assert.equal(text(arena.body([1, 2, 3], false, '[', ']')), `[${JSON.stringify({ v: 1, round: 49, pad: 'y'.repeat(200) })},${JSON.stringify({ v: 3, round: 49, pad: 'y'.repeat(200) })}]`);
  arena.clear();
  assert.equal(arena.size, 0);
  assert.equal(text(arena.body([1], true, '{', '}')), '{}');
});

test('a fragment larger than a chunk goes out whole', () => {
  const arena = new FragmentArena();
  const big = { blob: 'z'.repeat(3 * CHUNK) };
  arena.put(1, '"a"', JSON.stringify({ v: 1 }));
  arena.put(2, '"b"', JSON.stringify(big));
  assert.equal(text(arena.body([1, 2, 1], true, '{', '}')), `{"a":{"v":1},"b":${JSON.stringify(big)},"a":{"v":1}}`);
});
