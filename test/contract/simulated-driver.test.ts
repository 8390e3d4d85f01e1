// Runs the driver contract against the simulated twin, plus the twin's own test hooks (stats, handshakes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InterfaceSpec } from '../../panel/dataplane/wireguard/driver.ts';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { reconcile } from '../../panel/dataplane/reconcile.ts';
import { SimulatedDriver } from '../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { runDriverContract } from './driver.contract.ts';

runDriverContract('simulated', async () => {
  const driver = new SimulatedDriver();
  return {
    driver,
    cleanup: async () => undefined,
    linkIdentity: async (name) => driver.linkIndex(name),
    holdName: async (name) => {
      driver.holdInterface(name);
      return async () => driver.releaseInterface(name);
    },
  };
});

const spec = (name: string, listenPort: number): InterfaceSpec => ({
  name,
  privateKey: generateKeyPair().privateKey,
  listenPort,
  address: '10.1.0.1/24',
  addressIpv6: null,
  mtu: 0,
});

describe('SimulatedDriver test hooks', () => {
  it('counts ensure and applyPeers calls, and restarts only on a remove + re-create', async () => {
    const driver = new SimulatedDriver();
    const s = spec('wg1', 51820);
    await driver.ensureInterface(s);
    await driver.ensureInterface({ ...s, listenPort: 51821 });
    const peer = { publicKey: generateKeyPair().publicKey, allowedIps: ['10.1.0.2/32'], persistentKeepalive: 0 };
    await driver.applyPeers('wg1', { upsert: [peer], remove: [] });
    assert.deepEqual(driver.stats(), { ensureCalls: 2, applyPeersCalls: 1, restarts: 0, creates: 1 });
    await reconcile(driver, [{ spec: { ...s, listenPort: 51821 }, peers: [peer] }]);
    assert.equal(driver.stats().applyPeersCalls, 1, 'reconcile of a right state applies nothing');
    await driver.removeInterface('wg1');
    await driver.ensureInterface(s);
    assert.deepEqual(driver.stats(), { ensureCalls: 4, applyPeersCalls: 1, restarts: 1, creates: 2 });
  });

  it('simulateHandshake sets endpoint, handshake and counters, and peers sort by latest handshake', async () => {
    const driver = new SimulatedDriver({ now: () => 1_700_000_000 });
    await driver.ensureInterface(spec('wg2', 51830));
    const keys = [generateKeyPair().publicKey, generateKeyPair().publicKey, generateKeyPair().publicKey];
    await driver.applyPeers('wg2', {
      upsert: keys.map((publicKey, i) => ({ publicKey, allowedIps: [`10.1.0.${i + 2}/32`], persistentKeepalive: 0 })),
      remove: [],
    });
    driver.simulateHandshake('wg2', keys[2], { endpoint: '192.0.2.7:4444', at: 1_699_999_000, rx: 10, tx: 20 });
    driver.simulateHandshake('wg2', keys[1], { endpoint: '192.0.2.8:5555' });
    const peers = (await driver.inspect('wg2'))?.peers ?? [];
    assert.deepEqual(peers.map((p) => p.publicKey), [keys[1], keys[2], keys[0]]);
    assert.deepEqual(peers[0], {
      publicKey: keys[1], endpoint: '192.0.2.8:5555', allowedIps: ['10.1.0.3/32'],
      latestHandshake: 1_700_000_000, transferRx: 0, transferTx: 0, persistentKeepalive: 0,
    });
    assert.equal(peers[1].transferRx, 10);
    assert.equal(peers[1].transferTx, 20);
    // An update of the peer keeps its live counters, like wg set does.
    await driver.applyPeers('wg2', { upsert: [{ publicKey: keys[2], allowedIps: ['10.1.0.9/32'], persistentKeepalive: 5 }], remove: [] });
    const updated = (await driver.inspect('wg2'))?.peers.find((p) => p.publicKey === keys[2]);
    assert.equal(updated?.transferRx, 10);
    assert.equal(updated?.endpoint, '192.0.2.7:4444');
    assert.throws(() => driver.simulateHandshake('wg2', generateKeyPair().publicKey, { endpoint: '192.0.2.9:1' }));
    // sessions: the peers with a handshake since the bound, in inspect's (wg show's) order
    const since = (peers: Awaited<ReturnType<typeof driver.inspect>>, bound: number) => (peers?.peers ?? [])
      .filter((p) => p.latestHandshake !== 0 && p.latestHandshake >= bound)
      .map(({ publicKey, endpoint, latestHandshake, transferRx, transferTx }) => ({ publicKey, endpoint, latestHandshake, transferRx, transferTx }));
    assert.deepEqual(await driver.sessions('wg2', 1_699_999_000), since(await driver.inspect('wg2'), 1_699_999_000));
    assert.deepEqual((await driver.sessions('wg2', 1_699_999_000))!.map((p) => p.publicKey), [keys[1], keys[2]]);
    assert.deepEqual((await driver.sessions('wg2', 1_699_999_001))!.map((p) => p.publicKey), [keys[1]]);
  });
});
