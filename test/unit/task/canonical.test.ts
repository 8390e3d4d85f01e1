// Dedupe-key canonicalisation: key order and tag order do not matter, values and types do.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { canonicalJson, dedupeKey, normaliseTags } from '../../../module/task/canonical.ts';

test('canonicalJson sorts keys at every depth and keeps array order', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
  assert.equal(canonicalJson([undefined, 1]), '[null,1]');
  assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
});

test('normaliseTags trims, de-duplicates and sorts', () => {
  assert.deepEqual(normaliseTags([' service:b ', 'create', 'service:b', '']), ['create', 'service:b']);
});

test('dedupeKey is stable under key and tag reordering', () => {
  const a = dedupeKey('ModuleJob', 'Module', { module: { type: 'Product', name: 'VpnProduct', service_uuid: 'u1' }, method: 'createJob' }, ['create', 'service:u1']);
  const b = dedupeKey('ModuleJob', 'Module', { method: 'createJob', module: { service_uuid: 'u1', name: 'VpnProduct', type: 'Product' } }, ['service:u1', 'create', 'create']);
  assert.equal(a, b);
  assert.match(a, /^[0-9a-f]{64}$/);
});

test('dedupeKey differs when job, queue, input values, value types or tags differ', () => {
  const base = dedupeKey('ModuleJob', 'Module', { n: 1 }, ['t']);
  assert.notEqual(dedupeKey('OtherJob', 'Module', { n: 1 }, ['t']), base);
  assert.notEqual(dedupeKey('ModuleJob', 'Other', { n: 1 }, ['t']), base);
  assert.notEqual(dedupeKey('ModuleJob', 'Module', { n: 2 }, ['t']), base);
  assert.notEqual(dedupeKey('ModuleJob', 'Module', { n: '1' }, ['t']), base);
  assert.notEqual(dedupeKey('ModuleJob', 'Module', { n: 1 }, ['t', 'u']), base);
  assert.notEqual(dedupeKey('ModuleJob', 'Module', { n: 1 }, []), base);
});

test('with a pepper the key is a keyed HMAC', () => {
  const pepper = randomBytes(32);
  const keyed = dedupeKey('J', 'Q', { password: 'hunter22' }, [], pepper);
  assert.equal(dedupeKey('J', 'Q', { password: 'hunter22' }, [], pepper), keyed);
  assert.notEqual(dedupeKey('J', 'Q', { password: 'hunter22' }, []), keyed);
  assert.notEqual(dedupeKey('J', 'Q', { password: 'hunter22' }, [], randomBytes(32)), keyed);
});
