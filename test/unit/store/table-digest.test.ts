// The table digest `store migrate` compares: equal for the same rows whatever their order, column order or integer
// representation; different for any changed value, a NULL against an empty string, or a missing row.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TableDigest } from '../../../module/platform/store/transfer/table-digest.ts';

const digestOf = (rows: Array<Record<string, unknown>>): string => {
  const d = new TableDigest();
  for (const row of rows) d.add(row);
  return d.digest();
};

test('the digest depends on the rows, not on their order or representation', () => {
  const a = [{ id: 1, name: 'Ana', blob: Buffer.from('ff00', 'hex') }, { id: 2, name: 'Bo', blob: null }];
  const b = [{ blob: null, name: 'Bo', id: 2n }, { name: 'Ana', id: 1, blob: Buffer.from('ff00', 'hex') }];
  assert.equal(digestOf(a), digestOf(b));
  assert.notEqual(digestOf(a), digestOf([a[0], { ...a[1], name: 'bo' }]));
  assert.notEqual(digestOf([{ v: null }]), digestOf([{ v: '' }]));
  assert.notEqual(digestOf([{ v: 1 }]), digestOf([{ v: '1' }]));
  assert.notEqual(digestOf(a), digestOf(a.slice(1)));
  assert.notEqual(digestOf([a[0], a[0]]), digestOf([a[0]]), 'a duplicated row counts');
  const empty = new TableDigest();
  assert.equal(empty.rows, 0);
  assert.equal(empty.digest(), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'SHA-256 of nothing');
});
