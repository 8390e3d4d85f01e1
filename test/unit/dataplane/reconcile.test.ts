// Tests of reconcile's minimal diff and failure handling on the simulated driver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InterfaceSpec } from '../../../panel/dataplane/wireguard/driver.ts';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { ReconcileError, reconcile } from '../../../panel/dataplane/reconcile.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';

const spec = (name: string, listenPort: number, address: string): InterfaceSpec => ({
  name, privateKey: generateKeyPair().privateKey, listenPort, address, addressIpv6: null, mtu: 0,
});

test('one applyPeers per interface that differs, none for an interface already right', async () => {
  const driver = new SimulatedDriver();
  const a = spec('wg1', 51820, '10.0.1.1/24');
  const b = spec('wg2', 51821, '10.0.2.1/24');
  const peers = Array.from({ length: 50 }, (_, i) => ({ publicKey: generateKeyPair().publicKey, allowedIps: [`10.0.1.${i + 2}/32`], persistentKeepalive: 0 }));
  const report = await reconcile(driver, [{ spec: a, peers }, { spec: b, peers: [] }]);
  assert.deepEqual(report, { interfacesCreatedOrFixed: 2, interfacesRemoved: 0, peersAdded: 50, peersUpdated: 0, peersRemoved: 0 });
  assert.equal(driver.stats().applyPeersCalls, 1);
  // Host bits and order of allowed IPs do not count as a difference.
  const same = peers.map((p, i) => (i === 0 ? { ...p, allowedIps: [...p.allowedIps, '10.0.9.7/24'] } : p));
  await driver.applyPeers('wg1', { upsert: [same[0]], remove: [] });
  const calls = driver.stats().applyPeersCalls;
  await reconcile(driver, [{ spec: a, peers: same.map((p, i) => (i === 0 ? { ...p, allowedIps: ['10.0.9.0/24', p.allowedIps[0]] } : p)) }, { spec: b, peers: [] }]);
  assert.equal(driver.stats().applyPeersCalls, calls);
});

test('a failing interface does not stop the others; ReconcileError reports both', async () => {
  const driver = new SimulatedDriver();
  const good = spec('wg1', 51820, '10.0.1.1/24');
  const clash = spec('wg2', 51820, '10.0.2.1/24');
  const later = spec('wg3', 51822, '10.0.3.1/24');
  await assert.rejects(reconcile(driver, [{ spec: good, peers: [] }, { spec: clash, peers: [] }, { spec: later, peers: [] }]), (error: unknown) => {
    assert.ok(error instanceof ReconcileError);
    assert.deepEqual(error.failures.map((f) => f.name), ['wg2']);
    assert.match(error.failures[0].error.message, /Address already in use/);
    assert.equal(error.report.interfacesCreatedOrFixed, 2);
    return true;
  });
  assert.deepEqual(await driver.listInterfaces(), ['wg1', 'wg3']);
});
