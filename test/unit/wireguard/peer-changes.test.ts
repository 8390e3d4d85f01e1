// Unit tests of the minimal peer change per account change and of the serialized data-plane lane.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSimulatedDataplane } from '../../../panel/dataplane/create-dataplane.ts';
import { DataplaneSync, peerChanges } from '../../../panel/services/dataplane-sync.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import type { PeerSpec } from '../../../panel/dataplane/wireguard/driver.ts';

const a: PeerSpec = { publicKey: 'A', allowedIps: ['10.0.1.2/32'], persistentKeepalive: 0 };

test('create, delete, no-op, address change and key change give the minimal change', () => {
  assert.deepEqual(peerChanges(null, a), { upsert: [a], remove: [] });
  assert.deepEqual(peerChanges(a, null), { upsert: [], remove: ['A'] });
  assert.equal(peerChanges(null, null), null);
  assert.equal(peerChanges(a, { ...a, allowedIps: ['10.0.1.2/32'] }), null);
  const moved = { ...a, allowedIps: ['10.0.1.3/32'] };
  assert.deepEqual(peerChanges(a, moved), { upsert: [moved], remove: [] });
  const rekeyed = { ...a, publicKey: 'B' };
  assert.deepEqual(peerChanges(a, rekeyed), { upsert: [rekeyed], remove: ['A'] });
});

test('serialized tasks run one after another in call order, failures do not block the lane', async () => {
  const sync = new DataplaneSync({ dataplane: createSimulatedDataplane({ wireguard: new SimulatedDriver() }), servers: null as never, accounts: null as never, box: null as never });
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const first = sync.serial(async () => {
    order.push('first:start');
    await gate;
    order.push('first:end');
    return 1;
  });
  const second = sync.serial(() => {
    order.push('second');
    throw new Error('boom');
  });
  const third = sync.serial(() => {
    order.push('third');
    return 3;
  });
  await Promise.resolve();
  assert.deepEqual(order, ['first:start']);
  release();
  assert.equal(await first, 1);
  await assert.rejects(second, /boom/);
  assert.equal(await third, 3);
  assert.deepEqual(order, ['first:start', 'first:end', 'second', 'third']);
});
