// IKE SAs in the traffic statistics (simulated IPsec twin), and the samples taken before PUT /system/reload and before
// DELETE /ikev2/online, so neither loses the traffic since the last scheduled sample.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SimulatedIpsec } from '../../../panel/dataplane/ipsec/simulated/simulated-ipsec.ts';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';
import { makeStatsPanel } from './statistics-fixture.ts';

async function ok(h: Harness, method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, form?: Record<string, string>) {
  const e = envelope(await h.call(method, `/api/v1${url}`, form ? { form } : undefined));
  assert.equal(e.error, '', `${url}: ${e.error}`);
  return e.msg as any;
}

/** Download and upload of the month, summed. */
async function monthTotal(h: Harness, name: string): Promise<[number, number]> {
  const now = new Date();
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const [y, m] = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit' }).format(now).split('-');
  const entries = (await ok(h, 'GET', `/account/${name}/traffic_statistics/${y}/${Number(m)}`)) as Array<{ traffic_download: number; traffic_upload: number }>;
  return entries.reduce<[number, number]>((sum, e) => [sum[0] + e.traffic_download, sum[1] + e.traffic_upload], [0, 0]);
}

/** IKEv2 enabled (CA and server certificate) on server `ike` with account alice (`alice_u` / `pw-alice`). */
async function ikev2Alice(h: Harness): Promise<void> {
    await ok(h, 'PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Root', ca_organization: 'Org' });
    await ok(h, 'PUT', '/ikev2/generate_server_rsa', {
      server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test', server_organization: 'Org',
    });
    await ok(h, 'POST', '/wireguard', { name: 'ike', address: '10.77.0.1/24', ikev2: '1' });
    await ok(h, 'POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.5/32', name: 'alice', username: 'alice_u', password: 'pw-alice' });
    await ok(h, 'PUT', '/ikev2', { enabled: '1' });
}

test('IKE SA traffic is counted (download = bytes out, upload = bytes in), sampled before DELETE /ikev2/online and before a disable', async () => {
  const h = await makeHarness();
  try {
    await ikev2Alice(h);
    const ipsec = h.dataplane.ipsec as SimulatedIpsec;
    const sampler = h.app.services.statistics.sampler;

    const first = ipsec.connect('alice_u', 'pw-alice');
    ipsec.simulateTraffic(first.uniqueId, 1_000, 30_000);
    assert.equal((await sampler.sample()).ikeSas, 1);
    assert.deepEqual(await monthTotal(h, 'alice'), [30_000, 1_000]);
    ipsec.simulateTraffic(first.uniqueId, 500, 7_000); // not sampled by the schedule: the drop samples first
    await ok(h, 'DELETE', '/ikev2/online/alice');
    assert.deepEqual(await monthTotal(h, 'alice'), [37_000, 1_500]);

    const second = ipsec.connect('alice_u', 'pw-alice'); // a new SA starts at zero
    ipsec.simulateTraffic(second.uniqueId, 11, 22);
    await ok(h, 'PUT', '/account/alice', { status: 'disable' }); // samples (interface and SAs) before the SA ends
    assert.deepEqual(await monthTotal(h, 'alice'), [37_022, 1_511]);
    await sampler.sample();
    assert.deepEqual(await monthTotal(h, 'alice'), [37_022, 1_511], 'nothing counted twice');
  } finally {
    await h.close();
  }
});

test('PUT /system/reload takes a sample before it reconciles', async () => {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z' });
  try {
    const server = await p.ok('POST', '/wireguard', { name: 'srv' });
    const alice = await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    await p.sample();
    p.counters(server.interface_name, alice.public_key, 123, 456);
    const before = p.app.services.statistics.sampler.lastSample();
    await p.ok('PUT', '/system/reload');
    await p.app.services.reconciler.whenIdle();
    assert.notEqual(p.app.services.statistics.sampler.lastSample(), before, 'a sample ran');
    const entries = await p.ok('GET', '/account/alice/traffic_statistics/2026/3');
    assert.deepEqual(entries.find((e: any) => e.date === '2026-03-15'), { account: 'alice', date: '2026-03-15', traffic_download: 456, traffic_upload: 123 });
  } finally {
    await p.close();
  }
});

test("an account's new password samples before its IKE SA ends, so the SA's last bytes count", async () => {
  const h = await makeHarness();
  try {
    await ikev2Alice(h);
    const ipsec = h.dataplane.ipsec as SimulatedIpsec;
    const sa = ipsec.connect('alice_u', 'pw-alice');
    ipsec.simulateTraffic(sa.uniqueId, 300, 4_000);
    await h.app.services.statistics.sampler.sample();
    ipsec.simulateTraffic(sa.uniqueId, 20, 600); // after the last sample: only the sample before the SA ends keeps it
    await ok(h, 'PUT', '/account/alice', { password: 'pw-alice-2' });
    assert.equal((await ipsec.listSas()).length, 0, 'the password change ended the SA');
    assert.deepEqual(await monthTotal(h, 'alice'), [4_600, 320]);
  } finally {
    await h.close();
  }
});
