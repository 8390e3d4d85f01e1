// A real panel (linux data plane) and a real WireGuard client: known amounts pushed with `iperf3 -n` are read back
// from traffic_statistics, across graceful and kill -9 restarts, disable/enable and delete/re-create of the peer.
//
// What the counters hold (the documented overhead): `traffic_download`/`traffic_upload` are WireGuard's transfer
// counters, i.e. the bytes of the encrypted transport messages: every inner IP packet (TCP payload + 20 bytes IPv4 +
// 32 bytes TCP with timestamps), zero-padded to a multiple of 16, + 32 bytes (16 header, 16 tag), plus the
// handshakes, keepalives and the other direction's ACKs. At MTU 1420 a full segment carries 1368 payload bytes in
// 1420 + 32 counted bytes, so N pushed bytes count N × 1452/1368 (≈ +6.1 %); the test reads the amount back through
// that factor within 2 % (one direction at a time, paced so nothing is dropped and resent), and checks the figures
// against the client's own counters within 2 % as well.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startIperfServer, type IperfServer } from '../helpers/iperf.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { startWgClient } from '../helpers/wg-client.ts';

const SERVER_IP = '10.81.0.1';
const A_VETH = '10.198.0.1';
const B_VETH = '10.198.0.2';
/** Counted bytes per pushed byte at MTU 1420 (see the header). */
const OVERHEAD = 1452 / 1368;
const MB = 1024 * 1024;
/** iperf3 pacing: well below what two shared cores carry through two userspace daemons without loss. */
const PACE = '40M';
/** Opposite-direction bytes (TCP ACKs, keepalives) counted per pushed byte at most; the other counter stays under it. */
const ACKS = 0.06;

function near(actual: number, expected: number, what: string, tolerance = 0.02): void {
  assert.ok(Math.abs(actual - expected) <= expected * tolerance, `${what}: ${actual} is not within ${tolerance * 100}% of ${Math.round(expected)}`);
}

test('traffic statistics with a real WireGuard client: iperf3 -n read back, kill -9, disable/enable, delete/re-create', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'tc', 'iperf3', 'ss', 'ping'], { root: true })) return;
  const nsA = await createNamespace('vhsa');
  let nsB: string | null = null;
  let panel: PanelProcess | null = null;
  let iperf: IperfServer | null = null;
  try {
    nsB = await createNamespace('vhsb');
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a });
    const api = panel.client;
    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', {
      name: 'st', interface_name: iface, listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH,
      allowed_ips: '10.81.0.0/24', keep_alive: 0,
    });
    const client = uniqueWgName();
    /** Creates alice and brings the client up with her configuration. */
    const connect = async () => {
      await api.ok('POST', '/account', { wg_name: 'st', name: 'alice', allowed_IPs: '10.81.0.2' });
      await startWgClient(nsB!, client, await api.ok<string>('GET', '/account/alice/config_text'), '10.81.0.0/24');
      await ping();
    };
    const ping = async () => {
      for (let i = 0; i < 40 && (await execIn(nsB!, 'ping', ['-c', '1', '-W', '1', SERVER_IP], { allowFailure: true })).exitCode !== 0; i++);
    };
    /**
     * Pushes `bytes` client → server (`reverse`: server → client) with `iperf3 -n`, paced (`-b`) so that the
     * userspace daemons on two shared cores drop nothing (a dropped packet is counted by the sender, not the
     * receiver, and resent); returns the bytes iperf3's receiver got.
     */
    const pushOne = async (bytes: number, reverse: boolean): Promise<number> => {
      const args = ['-c', SERVER_IP, '-n', String(bytes), '-b', PACE, '-J'];
      if (reverse) args.push('-R');
      const report = JSON.parse((await execIn(nsB!, 'iperf3', args, { timeoutMs: 120_000 })).stdout) as { end: { sum_received: { bytes: number } } };
      return report.end.sum_received.bytes;
    };
    const push = async (up: number, down: number) => {
      if (up) await pushOne(up, false);
      if (down) await pushOne(down, true);
    };
    /** The client's own counters: [rx (= server's download), tx (= server's upload)]. */
    const clientCounters = async (): Promise<[number, number]> => {
      const peer = (await execIn(nsB!, 'wg', ['show', client, 'dump'])).stdout.trim().split('\n')[1].split('\t');
      return [Number(peer[5]), Number(peer[6])];
    };
    /** The month's sums for alice. */
    const month = async (): Promise<{ download: number; upload: number; days: number }> => {
      const now = new Date();
      const entries = await api.ok<Array<{ traffic_download: number; traffic_upload: number }>>(
        'GET', `/account/alice/traffic_statistics/${now.getFullYear()}/${now.getMonth() + 1}`);
      return {
        download: entries.reduce((s, e) => s + e.traffic_download, 0),
        upload: entries.reduce((s, e) => s + e.traffic_upload, 0),
        days: entries.length,
      };
    };
    await connect();
    iperf = await startIperfServer(nsA, SERVER_IP);

    await t.test('a known amount read back within 2% (with the documented overhead); the client agrees', async (st) => {
      const start = await month();
      const up = await pushOne(20 * MB, false);
      await panel!.restart(); // SIGTERM: the last sample before stopping
      const m = await month();
      assert.equal(m.days, new Date().getDate(), 'one entry per day up to today');
      st.diagnostic(`upload: pushed ${up} counted ${m.upload - start.upload} (×${((m.upload - start.upload) / up).toFixed(4)}), acks ${m.download - start.download}`);
      near(m.upload - start.upload, up * OVERHEAD, 'upload vs iperf3 -n');
      assert.ok(m.download - start.download < up * ACKS, 'the ACKs only in the other direction');
      const down = await pushOne(30 * MB, true);
      await panel!.restart();
      const m2 = await month();
      st.diagnostic(`download: pushed ${down} counted ${m2.download - m.download} (×${((m2.download - m.download) / down).toFixed(4)})`);
      near(m2.download - m.download, down * OVERHEAD, 'download vs iperf3 -n');
      const [rx, tx] = await clientCounters();
      st.diagnostic(`totals: upload ${m2.upload} download ${m2.download}; client tx ${tx} rx ${rx}`);
      near(m2.upload, tx, 'upload vs the client counters');
      near(m2.download, rx, 'download vs the client counters');
    });

    await t.test('kill -9 mid-month, restart, push more: the sum, nothing lost or counted twice', async () => {
      const before = await month();
      await push(10 * MB, 0); // not sampled before the crash
      await panel!.kill('SIGKILL');
      await panel!.restart();
      for (let i = 0; i < 100 && (await api.ok<{ status: string }>('GET', '/system/status')).status !== 'OK'; i++) await new Promise((r) => setTimeout(r, 200));
      await ping();
      await push(5 * MB, 0);
      await panel!.restart();
      const after = await month();
      near(after.upload - before.upload, 15 * MB * OVERHEAD, 'upload after the crash: the sum of both pushes');
      const [rx, tx] = await clientCounters();
      near(after.upload, tx, 'upload vs the client counters');
      near(after.download, rx, 'download vs the client counters');
    });

    await t.test('disable/enable keeps the figures right; delete removes them; re-create starts at zero', async () => {
      const before = await month();
      await push(8 * MB, 0);
      await api.ok('PUT', '/account/alice', { status: 'disable' }); // parked: counted by the next sample
      await panel!.restart(); // the last sample at shutdown counts the parked peer and removes it
      const disabled = await month();
      near(disabled.upload - before.upload, 8 * MB * OVERHEAD, 'the parked peer sampled');
      await api.ok('PUT', '/account/alice', { status: 'enable' });
      await ping();
      await push(4 * MB, 0);
      await panel!.restart();
      const enabled = await month();
      near(enabled.upload - disabled.upload, 4 * MB * OVERHEAD, 'after enable, counted from the new peer\'s zero');

      await api.ok('DELETE', '/account/alice');
      await connect(); // re-created with new keys: empty figures, counting from zero
      const fresh = await month();
      assert.equal(fresh.upload, 0);
      assert.equal(fresh.download, 0);
      await push(6 * MB, 0);
      await panel!.restart();
      const again = await month();
      near(again.upload, 6 * MB * OVERHEAD, 're-created account');
    });
  } finally {
    await iperf?.stop().catch(() => undefined);
    await panel?.cleanup().catch(() => undefined);
    if (nsB) await destroyNamespace(nsB);
    await destroyNamespace(nsA);
  }
});
