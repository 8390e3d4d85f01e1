// Traffic statistics of an IKEv2 client: a real strongSwan client in its own namespace pushes known amounts through
// the panel's charon (kernel-libipsec) with `iperf3 -n`; the figures are read back from traffic_statistics.
//
// What is counted for IKEv2 (the documented overhead): the CHILD SAs' `bytes-in`/`bytes-out` as charon lists them,
// i.e. the inner IP packets (payload + 20 bytes IPv4 + 32 bytes TCP with timestamps per segment), not ESP/UDP
// framing. download = bytes-out (server → client), upload = bytes-in. N pushed bytes thus count N × (1 + headers per
// segment): about +4 % at the tunnel's segment sizes. On a loaded host charon's userspace ESP drops packets and TCP
// sends them again, which is traffic and counted, so the exact reference is the client's own CHILD SA: the server's
// upload lies between the payload and what the client sent, its download is at least what the client received (and
// the payload), at most +25 %. The other direction carries the ACKs (52 bytes per one or two segments, checked below
// 6 % of the pushed amount). One direction per IKE SA, each read back after the DELETE /ikev2/online that ends it
// (which samples first).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startIperfServer, type IperfServer } from '../helpers/iperf.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { pings, StrongswanClient } from '../helpers/strongswan-client.ts';

const SERVER_IP = '10.79.0.1';
const A_VETH = '10.197.0.1';
const B_VETH = '10.197.0.2';
const DOMAIN = 'vpn.ikev2-stats.test';
const MB = 1024 * 1024;
/**
 * Counted bytes per pulled byte at most when the server sends (IP and TCP headers per segment, see the header, plus
 * segments the client's userspace ESP dropped under load and the server sent again: sent traffic, counted).
 */
const RESENT = 1.25;
/**
 * iperf3 pacing: charon's userspace ESP (kernel-libipsec) on two shared cores drops packets above this, and a dropped
 * packet is counted by the sender and resent (counted again), which is traffic, not overhead.
 */
const PACE = '8M';
/** Opposite-direction bytes (TCP ACKs) per pushed byte at most. */
const ACKS = 0.06;

test('IKEv2 traffic statistics: iperf3 -n through the strongSwan tunnel read back within the documented overhead', async (t) => {
  if (!requireTools(t, ['swanctl', 'charon-systemd', 'start-stop-daemon', 'wg', 'wireguard-go', 'ip', 'iptables', 'iperf3', 'ping'], { root: true })) return;
  const nsA = await createNamespace('vhsa');
  const namespaces = [nsA];
  let panel: PanelProcess | null = null;
  let iperf: IperfServer | null = null;
  const clientDir = mkdtempSync(join(tmpdir(), 'vpnhost-ike-stats-'));
  try {
    const nsB = await createNamespace('vhsb');
    namespaces.push(nsB);
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    panel = await PanelProcess.start({
      driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a,
      env: { VPNHOST_IPSEC_LIBIPSEC: '1', VPNHOST_PANEL_WATCHDOG_SECONDS: '0' },
    });
    const api = panel.client;
    await api.ok('POST', '/wireguard', {
      name: 'ike_stats', interface_name: uniqueWgName(), listen_port: 51820 + Math.floor(Math.random() * 10000), address: `${SERVER_IP}/24`,
      external_ip: A_VETH, ikev2: 1, dns_1: SERVER_IP, dns_2: SERVER_IP,
    });
    await api.ok('POST', '/account', { wg_name: 'ike_stats', allowed_IPs: '10.79.0.5', name: 'alice', username: 'alice_ike', password: 'Secret-alice-1' });
    await api.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Stats Test CA', ca_organization: 'vpnhost' });
    await api.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: DOMAIN, server_ip: A_VETH, server_common_name: DOMAIN, server_organization: 'vpnhost' });
    await api.ok('PUT', '/ikev2', { enabled: 1 });
    const profile = JSON.parse(await api.ok<string>('GET', '/account/alice/ikev2_profile'));
    const client = new StrongswanClient(nsB, clientDir, { server: A_VETH, remoteTs: ['10.79.0.0/24'] });
    await client.start();
    await client.load(profile, 'Secret-alice-1');
    assert.equal(await client.connect(), true, 'IKE SA up');
    assert.equal(await pings(nsB, SERVER_IP), true, 'ping through the IKEv2 tunnel');
    iperf = await startIperfServer(nsA, SERVER_IP);

    const month = async (): Promise<[download: number, upload: number]> => {
      const now = new Date();
      const entries = await api.ok<Array<{ traffic_download: number; traffic_upload: number }>>(
        'GET', `/account/alice/traffic_statistics/${now.getFullYear()}/${now.getMonth() + 1}`);
      return entries.reduce<[number, number]>((s, e) => [s[0] + e.traffic_download, s[1] + e.traffic_upload], [0, 0]);
    };
    const push = async (bytes: number, reverse: boolean): Promise<number> => {
      const args = ['-c', SERVER_IP, '-n', String(bytes), '-b', PACE, '-J', ...(reverse ? ['-R'] : [])];
      return (JSON.parse((await execIn(nsB, 'iperf3', args, { timeoutMs: 120_000 })).stdout) as { end: { sum_received: { bytes: number } } })
        .end.sum_received.bytes;
    };
    // one direction per IKE SA; DELETE /ikev2/online samples before it ends the SA (nothing since the last
    // scheduled sample is lost), and the next SA starts at zero
    // Bounds: at least the payload iperf3 saw arrive, at most what the client's own CHILD SA sent (the server can only
    // count what it decrypted: packets lost on the way are the difference, resent ones are counted on both ends).
    const [down0, up0] = await month();
    const up = await push(4 * MB, false);
    const clientUp = await client.childBytes();
    await api.ok('DELETE', '/ikev2/online/alice');
    const [down1, up1] = await month();
    t.diagnostic(`upload: pushed ${up} counted ${up1 - up0} (×${((up1 - up0) / up).toFixed(4)}) client sent ${clientUp.out}, acks ${down1 - down0}`);
    assert.ok(up1 - up0 >= up && up1 - up0 <= clientUp.out, `upload ${up1 - up0} for ${up} pushed, ${clientUp.out} sent by the client`);
    assert.ok(down1 - down0 < up * ACKS, `the ACKs only in the other direction: ${down1 - down0}`);
    assert.ok(down1 - down0 >= clientUp.in, `the server counted at least what the client received: ${down1 - down0} vs ${clientUp.in}`);

    assert.equal(await client.connect(), true, 'a new IKE SA');
    assert.equal(await pings(nsB, SERVER_IP), true);
    const down = await push(3 * MB, true);
    const clientDown = await client.childBytes();
    await api.ok('DELETE', '/ikev2/online/alice');
    const [down2, up2] = await month();
    t.diagnostic(`download: pulled ${down} counted ${down2 - down1} (×${((down2 - down1) / down).toFixed(4)}) client received ${clientDown.in}, acks ${up2 - up1}`);
    assert.ok(down2 - down1 >= Math.max(down, clientDown.in) && down2 - down1 <= down * RESENT, `download ${down2 - down1} for ${down} pulled, ${clientDown.in} received by the client`);
    assert.ok(up2 - up1 < down * ACKS, `the ACKs only in the other direction: ${up2 - up1}`);
    assert.ok(up2 - up1 <= clientDown.out, `upload at most what the client sent: ${up2 - up1} vs ${clientDown.out}`);
    // the SA is gone: the sample of a reload adds nothing
    await api.ok('PUT', '/system/reload');
    assert.deepEqual(await month(), [down2, up2]);
  } finally {
    await iperf?.stop();
    await panel?.cleanup();
    for (const ns of namespaces.reverse()) await destroyNamespace(ns);
    rmSync(clientDir, { recursive: true, force: true });
  }
});
