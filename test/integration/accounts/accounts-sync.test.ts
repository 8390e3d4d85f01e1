// Data-plane consistency: one applyPeers per change, rollback on driver failure, reconcile, concurrent creations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataplaneError, type PeerChanges } from '../../../panel/dataplane/wireguard/driver.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { makePanel } from '../wireguard/panel-fixture.ts';

/** A simulated driver whose next applyPeers/ensureInterface fails when armed. */
class FlakyDriver extends SimulatedDriver {
  failApply = false;
  failEnsure = false;
  override async applyPeers(name: string, changes: PeerChanges): Promise<void> {
    if (this.failApply) {
      this.failApply = false;
      throw new DataplaneError('wg: Unable to modify interface: Operation not permitted');
    }
    return super.applyPeers(name, changes);
  }
  override async ensureInterface(spec: Parameters<SimulatedDriver['ensureInterface']>[0]): Promise<void> {
    if (this.failEnsure) {
      this.failEnsure = false;
      throw new DataplaneError('ip: RTNETLINK answers: Operation not permitted');
    }
    return super.ensureInterface(spec);
  }
}

test('a driver failure leaves store and data plane as they were', async () => {
  const driver = new FlakyDriver();
  const p = await makePanel({ driver });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    driver.failApply = true;
    const failed = await p.call('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });
    assert.equal(failed.status, 500);
    assert.equal(failed.body.status, 'error');
    assert.doesNotMatch(failed.body.error, /Operation not permitted/, 'tool details stay in the log');
    assert.deepEqual(await p.ok('GET', '/account'), []);
    const account = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });

    driver.failApply = true;
    assert.equal((await p.call('PUT', '/account/a', { status: 'disable' })).status, 500);
    assert.equal((await p.ok('GET', '/account/a')).status, 'enable');
    assert.equal((await driver.inspect('wg0'))?.peers.length, 1);

    driver.failApply = true;
    assert.equal((await p.call('DELETE', '/account/a')).status, 500);
    assert.deepEqual(await p.ok('GET', '/account/a'), account);

    driver.failEnsure = true;
    assert.equal((await p.call('PUT', '/wireguard/srv', { listen_port: '52000' })).status, 500);
    assert.equal((await p.ok('GET', '/wireguard/srv')).listen_port, '51820');
    assert.equal((await driver.inspect('wg0'))?.listenPort, 51820);

    driver.failEnsure = true;
    assert.equal((await p.call('POST', '/wireguard', { name: 'srv2' })).status, 500);
    assert.equal((await p.call('GET', '/wireguard/srv2')).status, 404);
    assert.deepEqual(await driver.listInterfaces(), ['wg0']);
  } finally {
    await p.close();
  }
});

test('a sequence of changes makes exactly one applyPeers each, carrying just that peer', async () => {
  const driver = new SimulatedDriver();
  const seen: PeerChanges[] = [];
  const original = driver.applyPeers.bind(driver);
  driver.applyPeers = async (name, changes) => {
    seen.push(structuredClone(changes));
    return original(name, changes);
  };
  const p = await makePanel({ driver });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    for (let i = 2; i < 12; i++) await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: `10.0.1.${i}`, name: `n${i}` });
    seen.length = 0;
    const target = await p.ok('GET', '/account/n5');
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.50', name: 'new' });
    await p.ok('PUT', '/account/n5', { status: 'disable' });
    await p.ok('PUT', '/account/n5', { status: 'enable' });
    await p.ok('PUT', '/account/n5', { allowed_IPs: '10.0.1.60' });
    await p.ok('DELETE', '/account/n5');
    assert.equal(seen.length, 5);
    for (const change of seen) assert.equal(change.upsert.length + change.remove.length, 1, JSON.stringify(change));
    assert.deepEqual(seen.slice(1).map((c) => c.upsert[0]?.publicKey ?? c.remove[0]), Array(4).fill(target.public_key));
    // the disable parks the peer (its addresses cleared, counters kept for the next sample), the delete removes it
    assert.deepEqual(seen[1], { upsert: [{ publicKey: target.public_key, allowedIps: [], persistentKeepalive: 0 }], remove: [] });
    assert.deepEqual(seen[4], { upsert: [], remove: [target.public_key] });
    assert.deepEqual(seen[3].upsert[0].allowedIps, ['10.0.1.60/32']);
  } finally {
    await p.close();
  }
});

test('reconcileAll rebuilds a fresh data plane from the store (servers and enabled accounts only)', async () => {
  const p = await makePanel();
  const dir = p.dir;
  let q: Awaited<ReturnType<typeof makePanel>> | null = null;
  try {
    await p.ok('POST', '/wireguard', { name: 'a' });
    await p.ok('POST', '/wireguard', { name: 'b', mtu: '1300' });
    const on = await p.ok('POST', '/account', { wg_name: 'a', allowed_IPs: '10.0.1.2' });
    await p.ok('POST', '/account', { wg_name: 'a', allowed_IPs: '10.0.1.3', status: 'disable' });
    const onB = await p.ok('POST', '/account', { wg_name: 'b', allowed_IPs: '10.0.2.2' });
    await p.app.close();
    p.db.close();
    // A new panel on the same data directory with an empty data plane, as after a reboot.
    q = await makePanel({ dir });
    const progress: Array<[number, number]> = [];
    await q.app.services.dataplaneSync.reconcileAll((done, total) => progress.push([done, total]));
    assert.deepEqual(progress, [[1, 2], [2, 2]]);
    assert.deepEqual(await q.driver.listInterfaces(), ['wg0', 'wg1']);
    assert.deepEqual((await q.driver.inspect('wg0'))?.peers.map((x) => x.publicKey), [on.public_key]);
    assert.deepEqual((await q.driver.inspect('wg1'))?.peers.map((x) => x.publicKey), [onB.public_key]);
    assert.equal((await q.driver.inspect('wg1'))?.mtu, 1300);
    // PUT /system/reload goes through the same path.
    assert.equal(await q.ok('PUT', '/system/reload'), 'success');
  } finally {
    await q?.close();
    const { rmSync } = await import('node:fs');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('concurrent creations are serialized: distinct rows, one peer each, conflicts refused', async () => {
  const p = await makePanel({ licenseAccounts: 500 });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => p.call('POST', '/account', { wg_name: 'srv', allowed_IPs: `10.0.1.${(i % 30) + 2}` })),
    );
    const okCount = answers.filter((a) => a.body.status === 'success').length;
    assert.equal(okCount, 30);
    assert.ok(answers.filter((a) => a.body.status === 'error').every((a) => a.body.error === 'IP address already in use'));
    assert.equal((await p.driver.inspect('wg0'))?.peers.length, 30);
    assert.equal((await p.ok('GET', '/account')).length, 30);
  } finally {
    await p.close();
  }
});
