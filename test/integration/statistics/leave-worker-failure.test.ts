// Issue 19 item 7: a suspended peer's last bytes are never lost to the sample worker. The suspend itself reads nothing
// (the peer is parked); the next sample counts it, and when the worker stalls, dies or is killed in mid-sample, that
// sample is taken on the panel's thread through the driver, exactly once.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeStatsPanel, type StatsPanel } from './statistics-fixture.ts';

const entry = (name: string) => new URL(`../../fixtures/statistics/${name}`, import.meta.url);

async function month(p: StatsPanel, name: string): Promise<[number, number]> {
  const day = (await p.ok('GET', `/account/${name}/traffic_statistics/2026/3`)).find((e: any) => e.date === '2026-03-15');
  return [day.traffic_download, day.traffic_upload];
}

async function setup(worker: NonNullable<Parameters<typeof makeStatsPanel>[0]>['worker']) {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z', worker });
  const server = await p.ok('POST', '/wireguard', { name: 'srv' });
  const alice = await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
  const bob = await p.ok('POST', '/account', { wg_name: 'srv', name: 'bob', allowed_IPs: '10.0.1.3' });
  return { p, iface: server.interface_name as string, alice: alice.public_key as string, bob: bob.public_key as string };
}

for (const [how, file] of [['stalls', 'worker-stalls.mjs'], ['dies', 'worker-dies.mjs']] as const) {
  test(`the worker ${how}: a suspended peer's last bytes are counted on the panel thread, once, and the peer is removed`, async () => {
    const { p, iface, alice, bob } = await setup({ entry: entry(file), timeoutMs: 300, restMs: 0 });
    try {
      p.counters(iface, alice, 1_000, 50_000);
      const first = await p.sample();
      assert.equal(first.fallback, true);
      assert.deepEqual(await month(p, 'alice'), [50_000, 1_000]);
      p.counters(iface, alice, 1_500, 80_000);
      p.counters(iface, bob, 10, 20);
      await p.ok('PUT', '/account/alice', { status: 'disable' });
      const settled = await p.sample();
      assert.equal(settled.fallback, true);
      assert.deepEqual(settled.parked, [[iface, alice, '192.0.2.7:5000']]);
      assert.deepEqual(await month(p, 'alice'), [80_000, 1_500], 'the bytes since the last sample are there');
      assert.deepEqual(await month(p, 'bob'), [20, 10]);
      assert.equal((await p.driver.inspect(iface))!.peers.some((peer) => peer.publicKey === alice), false);
      p.clock.advance(60_000);
      await p.sample();
      assert.deepEqual(await month(p, 'alice'), [80_000, 1_500], 'nothing counted twice');
      assert.deepEqual(await month(p, 'bob'), [20, 10]);
    } finally {
      await p.close();
    }
  });
}

test('the real worker killed in mid-sample (a 1 ms deadline), each sample: every sample counted exactly once', async () => {
  const { p, iface, alice } = await setup({ timeoutMs: 1, restMs: 0 });
  try {
    let expected = 0;
    for (let round = 1; round <= 4; round++) {
      p.counters(iface, alice, round * 100, round * 1_000);
      expected = round * 1_000;
      p.clock.advance(60_000);
      // the worker may or may not have committed before it was terminated: the fallback counts from what the store holds
      await p.sample();
      assert.deepEqual(await month(p, 'alice'), [expected, expected / 10], `round ${round}`);
    }
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    p.counters(iface, alice, 450, 4_500);
    await p.sample();
    assert.deepEqual(await month(p, 'alice'), [4_500, 450]);
  } finally {
    await p.close();
  }
});

test('a delete or a suspend waits for no worker: one that would never start is never even started', async () => {
  const { p } = await setup({ entry: entry('worker-never-ready.mjs'), startTimeoutMs: 600_000 });
  try {
    await p.ok('PUT', '/account/alice', { status: 'disable' });
    await p.ok('DELETE', '/account/alice');
    await p.ok('DELETE', '/account/bob');
    assert.equal(existsSync(join(p.dir, 'panel.db.worker-started')), false);
  } finally {
    await p.close();
  }
});

test('after a failure the worker rests: the next samples run on the panel thread without waiting for it', async () => {
  const { p, iface, alice } = await setup({ entry: entry('worker-stalls.mjs'), timeoutMs: 300 });
  try {
    p.counters(iface, alice, 10, 20);
    assert.equal((await p.sample()).fallback, true);
    const marker = join(p.dir, 'panel.db.worker-started');
    rmSync(marker);
    p.counters(iface, alice, 30, 60);
    assert.equal((await p.sample()).fallback, true);
    assert.equal(existsSync(marker), false, 'no worker started for the second sample');
    assert.deepEqual(await month(p, 'alice'), [60, 30]);
  } finally {
    await p.close();
  }
});
