// The sampler through the full app: deltas per day, direction, disable/enable, delete/re-create (cascade), resets, restart, retention.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeStatsPanel, type StatsPanel } from './statistics-fixture.ts';

const HOUR = 3600_000;

async function month(p: StatsPanel, name: string, y: number, m: number): Promise<Record<string, [number, number]>> {
  const out: Record<string, [number, number]> = {};
  for (const e of await p.ok('GET', `/account/${name}/traffic_statistics/${y}/${m}`)) {
    if (e.traffic_download || e.traffic_upload) out[e.date] = [e.traffic_download, e.traffic_upload];
  }
  return out;
}

/** The next `applyPeers` of a subsystem fails as a tool would; the one after works again. */
function failOnce(subsystem: { applyPeers(...args: never[]): Promise<unknown> }): void {
  const target = subsystem as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target.applyPeers;
  target.applyPeers = async () => {
    target.applyPeers = original;
    throw new Error('simulated tool failure');
  };
}

async function setup(start?: string) {
  const p = await makeStatsPanel({ start });
  const server = await p.ok('POST', '/wireguard', { name: 'srv' });
  const alice = await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
  const bob = await p.ok('POST', '/account', { wg_name: 'srv', name: 'bob', allowed_IPs: '10.0.1.3' });
  return { p, iface: server.interface_name as string, alice: alice.public_key as string, bob: bob.public_key as string };
}

test('download = bytes sent to the peer (transfer_tx), upload = bytes received (transfer_rx); one row per account and day', async () => {
  const { p, iface, alice, bob } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 1_000, 50_000);
    const first = (await p.sample()) as any;
    assert.equal(first.peers, 2);
    p.counters(iface, alice, 1_500, 80_000);
    p.counters(iface, bob, 7, 9);
    p.clock.advance(HOUR);
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [80_000, 1_500] });
    assert.deepEqual(await month(p, 'bob', 2026, 3), { '2026-03-15': [9, 7] });
    const rows = p.db.prepare('SELECT COUNT(*) AS n FROM traffic_statistics').get() as { n: number };
    assert.equal(rows.n, 2);
    // next day
    p.clock.set(new Date('2026-03-16T00:00:00Z'));
    await p.sample(); // the midnight sample the scheduler takes
    p.counters(iface, alice, 1_600, 80_100);
    p.clock.advance(HOUR);
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [80_000, 1_500], '2026-03-16': [100, 100] });
  } finally {
    await p.close();
  }
});

test('a disabled peer is parked until the next sample counts its last bytes and removes it; re-enabled it counts from zero; delete removes the statistics; re-create starts empty', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    await p.sample();
    p.counters(iface, alice, 100, 1_000);
    const calls = p.driver.stats().applyPeersCalls;
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    const parked = (await p.driver.inspect(iface))!.peers.find((peer) => peer.publicKey === alice)!;
    assert.deepEqual([parked.allowedIps, parked.transferRx, parked.transferTx], [[], 100, 1_000], 'parked: no address, counters kept');
    assert.equal(p.driver.stats().applyPeersCalls, calls + 1, 'the disable is one wg set');
    assert.deepEqual(await month(p, 'alice', 2026, 3), {}, 'not sampled yet');
    const settled = await p.sample(); // the next scheduled sample counts the parked peer, then removes it
    assert.deepEqual(settled.parked, [[iface, alice, '192.0.2.7:5000']]);
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [1_000, 100] });
    assert.equal((await p.driver.inspect(iface))!.peers.some((peer) => peer.publicKey === alice), false, 'removed after its sample');
    assert.equal(p.db.prepare("SELECT last_endpoint FROM accounts WHERE name = 'alice'").pluck().get(), '192.0.2.7:5000', 'its endpoint kept');
    await p.sample(); // disabled and gone: nothing added
    await p.ok('PUT', '/account/alice', { status: 'enable' });
    assert.equal((await p.driver.inspect(iface))!.peers.find((peer) => peer.publicKey === alice)!.endpoint, '192.0.2.7:5000', 'resumed at its endpoint');
    p.counters(iface, alice, 5_000, 9_000); // more than before the disable: still counted whole
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [10_000, 5_100] });
    // disabled and enabled again between two samples: the peer never left, its counters go on
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    await p.ok('PUT', '/account/alice', { status: 'enable' });
    p.counters(iface, alice, 20_000, 20_000);
    const continued = await p.sample();
    assert.equal(continued.resets, 0);
    assert.deepEqual(continued.parked, []);
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [21_000, 20_100] });

    await p.ok('DELETE', '/account/alice');
    assert.equal((p.db.prepare('SELECT COUNT(*) AS n FROM traffic_statistics').get() as any).n, 0, 'bob had no traffic');
    await p.sample();
    const { unpackBaselines } = await import('../../../panel/services/statistics/baseline-set.ts');
    const [data] = p.db.prepare("SELECT data FROM traffic_baseline_sets WHERE source = ?").raw(true).get(`wg:${iface}`) as [Buffer];
    assert.deepEqual([...unpackBaselines(data, 0).ids], [(p.db.prepare("SELECT id FROM accounts WHERE name = 'bob'").pluck().get() as number)], 'only bob is left');
    const again = await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    assert.deepEqual(await month(p, 'alice', 2026, 3), {});
    p.counters(iface, again.public_key, 10, 20);
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [20, 10] });
  } finally {
    await p.close();
  }
});

test('counters that went backwards (interface re-created, daemon restart) start a new baseline', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 1_000_000, 2_000_000);
    await p.sample();
    p.counters(iface, alice, 10, 20); // reset under us
    p.clock.advance(60_000);
    const s = (await p.sample()) as any;
    assert.equal(s.resets, 1);
    p.counters(iface, alice, 110, 220);
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [2_000_220, 1_000_110] });
  } finally {
    await p.close();
  }
});

test('a panel restart continues from the stored baselines: nothing lost, nothing counted twice', async () => {
  const first = await setup('2026-03-15T12:00:00Z');
  const dir = first.p.dir;
  const driver = first.p.driver; // the daemon keeps running across the panel restart
  try {
    first.p.counters(first.iface, first.alice, 100, 1_000);
    await first.p.sample();
    first.p.counters(first.iface, first.alice, 200, 2_000); // not sampled before the "kill -9"
    await first.p.app.close();
    first.p.db.close();
    const second = await makeStatsPanel({ start: '2026-03-15T13:00:00Z', dir, driver });
    try {
      second.counters(first.iface, first.alice, 300, 3_000);
      await second.sample();
      assert.deepEqual(await month(second, 'alice', 2026, 3), { '2026-03-15': [3_000, 300] });
    } finally {
      await second.close();
    }
  } finally {
    const { rmSync } = await import('node:fs');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('retention: rows before the first day of the month `traffic_statistics_history` months back are pruned', async () => {
  const { p, iface, alice } = await setup('2026-01-10T12:00:00Z');
  try {
    p.counters(iface, alice, 1, 1);
    await p.sample();
    p.clock.set(new Date('2026-02-10T12:00:00Z'));
    p.counters(iface, alice, 2, 2);
    await p.sample();
    p.clock.set(new Date('2026-03-31T12:00:00Z'));
    p.counters(iface, alice, 3, 3);
    await p.sample();
    await p.ok('PUT', '/system/config', { traffic_statistics_history: '1' });
    assert.equal(p.app.services.statistics.firstKeptDay(), '2026-02-01');
    assert.equal(p.app.services.statistics.prune(), 1);
    assert.deepEqual(await month(p, 'alice', 2026, 1), {});
    assert.deepEqual(await month(p, 'alice', 2026, 2), { '2026-02-10': [1, 1] });
    await p.ok('PUT', '/system/config', { traffic_statistics_history: '0' });
    assert.equal(p.app.services.statistics.prune(), 1);
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-31': [1, 1] });
    await p.ok('PUT', '/system/config', { traffic_statistics_history: '2147483647' });
    assert.equal(p.app.services.statistics.firstKeptDay(), '0000-01-01');
  } finally {
    await p.close();
  }
});

test('a sample is one transaction: a failing write leaves rows and baselines as they were', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 10, 10);
    await p.sample();
    p.counters(iface, alice, 20, 20);
    p.db.exec("CREATE TRIGGER fail_bob BEFORE UPDATE ON traffic_baseline_sets BEGIN SELECT RAISE(ABORT, 'boom'); END");
    await assert.rejects(p.sample(), /boom/);
    p.db.exec('DROP TRIGGER fail_bob');
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [10, 10] });
    await p.sample();
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [20, 20] });
  } finally {
    await p.close();
  }
});

test('a delete the data plane refuses restores the account with its statistics', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 1_000, 50_000);
    await p.sample();
    p.counters(iface, alice, 1_500, 80_000);
    p.clock.advance(HOUR);
    await p.sample();
    const before = await month(p, 'alice', 2026, 3);
    assert.deepEqual(before, { '2026-03-15': [80_000, 1_500] });
    failOnce(p.dataplane.wireguard);
    assert.equal((await p.call('DELETE', '/account/alice')).status, 500);
    assert.deepEqual(await month(p, 'alice', 2026, 3), before);
  } finally {
    await p.close();
  }
});

test('a delete refused by the firewall leaves the peer and its counters as they were: the bytes since the last sample stay', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 1_000, 50_000);
    await p.sample();
    p.counters(iface, alice, 1_500, 80_000);
    failOnce(p.dataplane.firewall);
    const calls = p.driver.stats().applyPeersCalls;
    assert.equal((await p.call('DELETE', '/account/alice')).status, 500);
    assert.equal(p.driver.stats().applyPeersCalls, calls, 'WireGuard comes after the refused step: never touched');
    p.clock.advance(HOUR);
    const next = await p.sample();
    assert.equal(next.resets, 0);
    assert.deepEqual(await month(p, 'alice', 2026, 3), { '2026-03-15': [80_000, 1_500] });
  } finally {
    await p.close();
  }
});

test('a suspended account deleted while its peer is parked: the peer goes with it, and its key may come back as a new account counting from zero', async () => {
  const { p, iface, alice } = await setup('2026-03-15T12:00:00Z');
  try {
    p.counters(iface, alice, 1_000, 50_000);
    await p.sample();
    p.counters(iface, alice, 1_500, 80_000);
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    await p.ok('DELETE', '/account/alice');
    assert.equal((await p.driver.inspect(iface))!.peers.some((peer) => peer.publicKey === alice), false, 'not left parked');
    await p.ok('POST', '/account', { wg_name: 'srv', name: 'again', allowed_IPs: '10.0.1.9', public_key: alice });
    p.counters(iface, alice, 10, 20);
    await p.sample();
    assert.deepEqual(await month(p, 'again', 2026, 3), { '2026-03-15': [20, 10] }, 'none of the deleted account\'s bytes');
  } finally {
    await p.close();
  }
});
