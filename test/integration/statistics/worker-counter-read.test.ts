// The sampler over a linux-kind driver: its worker reads a wireguard-go interface's counters over the UAPI socket (a
// fake daemon on a socket in a temp directory answering get=1) and leaves only the interfaces it cannot read to
// Driver.transfers, which is never asked for the other.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { uapiSocketPath } from '../../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { TrafficSampler } from '../../../panel/services/statistics/sampler.ts';
import { TrafficStatisticsRepository } from '../../../panel/store/repositories/traffic-statistics.ts';
import { makeStatsPanel } from './statistics-fixture.ts';

test('the worker reads UAPI counters itself; the driver reads only the interface without a socket', async () => {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z' });
  const dir = join(p.dir, 'uapi');
  mkdirSync(dir);
  const names = [`wg${randomInt(100_000, 500_000)}`, `wg${randomInt(500_000, 1_000_000)}`];
  const counters = { rx: 1234, tx: 5678 };
  let aliceHex = '';
  const fake = createServer((socket) => socket.once('data', () => socket.end(
    `private_key=${'11'.repeat(32)}\nlisten_port=51820\npublic_key=${aliceHex}\npreshared_key=${'00'.repeat(32)}\n` +
    `protocol_version=1\nlast_handshake_time_sec=0\nlast_handshake_time_nsec=0\ntx_bytes=${counters.tx}\nrx_bytes=${counters.rx}\n` +
    `persistent_keepalive_interval=0\nallowed_ip=10.0.1.2/32\nerrno=0\n\n`,
  )));
  let sampler: TrafficSampler | null = null;
  try {
    await p.ok('POST', '/wireguard', { name: 'user', interface_name: names[0], address: '10.0.1.1/24' });
    const kernel = await p.ok('POST', '/wireguard', { name: 'kern', interface_name: names[1], address: '10.0.2.1/24' });
    const alice = await p.ok('POST', '/account', { wg_name: 'user', name: 'alice', allowed_IPs: '10.0.1.2' });
    const bob = await p.ok('POST', '/account', { wg_name: 'kern', name: 'bob', allowed_IPs: '10.0.2.2' });
    aliceHex = Buffer.from(alice.public_key, 'base64').toString('hex');
    p.counters(kernel.interface_name, bob.public_key, 11, 22);
    await new Promise<void>((resolve) => fake.listen(uapiSocketPath(names[0], dir), resolve));
    const asked: string[] = [];
    sampler = new TrafficSampler({
      repo: new TrafficStatisticsRepository(p.db), clock: p.clock, timeZone: 'UTC', uapiDir: dir,
      wireguard: { kind: 'linux', transfers: (iface) => (asked.push(iface), p.driver.transfers(iface)) },
    });
    const result = await sampler.sample();
    assert.deepEqual(asked, [names[1]], 'the driver read only the interface without a UAPI socket');
    assert.equal(result.interfaces, 2);
    assert.equal(result.peers, 2);
    assert.deepEqual([result.download, result.upload], [5678 + 22, 1234 + 11]);
    const day = async (name: string) => (await p.ok('GET', `/account/${name}/traffic_statistics/2026/3`)).find((e: any) => e.date === '2026-03-15');
    assert.deepEqual(await day('alice'), { account: 'alice', date: '2026-03-15', traffic_download: 5678, traffic_upload: 1234 });
    assert.deepEqual(await day('bob'), { account: 'bob', date: '2026-03-15', traffic_download: 22, traffic_upload: 11 });

    counters.rx += 100;
    counters.tx += 1000;
    p.clock.advance(300_000);
    assert.deepEqual([(await sampler.sample()).download], [1000], 'the next read continues the baseline');
    assert.deepEqual(await day('alice'), { account: 'alice', date: '2026-03-15', traffic_download: 6678, traffic_upload: 1334 });

    const off = new TrafficSampler({
      repo: new TrafficStatisticsRepository(p.db), clock: p.clock, timeZone: 'UTC', uapiDir: dir,
      wireguard: { kind: 'simulated', transfers: (iface) => (asked.push(iface), p.driver.transfers(iface)) },
    });
    asked.length = 0;
    await off.sample();
    await off.close();
    assert.deepEqual(asked.sort(), [...names].sort(), 'the simulated twin is always read through the driver');
  } finally {
    await sampler?.close();
    fake.close();
    await p.close();
  }
});
