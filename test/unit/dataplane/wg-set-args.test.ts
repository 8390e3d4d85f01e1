// Tests of the `wg set` argv builder: one call per batch, removals first, chunking only past the limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderWgSetArgs } from '../../../panel/dataplane/render/wg-set-args.ts';

const A = 'A'.repeat(43) + '=';
const B = 'B'.repeat(43) + '=';
const C = 'C'.repeat(43) + '=';

test('one wg set for a mixed batch, removals then upserts', () => {
  assert.deepEqual(
    renderWgSetArgs('wg7', {
      upsert: [
        { publicKey: A, allowedIps: ['10.0.0.2/32', 'fd00::2/128'], persistentKeepalive: 25 },
        { publicKey: B, allowedIps: [], persistentKeepalive: 0 },
      ],
      remove: [C],
    }),
    [[
      'set', 'wg7',
      'peer', C, 'remove',
      'peer', A, 'allowed-ips', '10.0.0.2/32,fd00::2/128', 'persistent-keepalive', '25',
      'peer', B, 'allowed-ips', '', 'persistent-keepalive', '0',
    ]],
  );
});

test('nothing to do renders no call', () => {
  assert.deepEqual(renderWgSetArgs('wg7', { upsert: [], remove: [] }), []);
});

test('chunks huge batches, keeping order', () => {
  const keys = Array.from({ length: 5 }, (_, i) => String(i).repeat(43) + '=');
  const calls = renderWgSetArgs('wg1', { upsert: [], remove: keys }, 2);
  assert.equal(calls.length, 3);
  assert.deepEqual(calls.map((c) => c.filter((x) => keys.includes(x))), [keys.slice(0, 2), keys.slice(2, 4), keys.slice(4)]);
  for (const call of calls) assert.deepEqual(call.slice(0, 2), ['set', 'wg1']);
  assert.equal(renderWgSetArgs('wg1', { upsert: [], remove: Array(500).fill(A) }).length, 1);
});
