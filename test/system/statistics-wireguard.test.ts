// A real panel (linux data plane) and a real WireGuard client: known amounts pushed with `iperf3 -n` are read back
// from traffic_statistics, across graceful and kill -9 restarts, disable/enable and delete/re-create of the peer.
//
// What the counters hold (the documented overhead): `traffic_download`/`traffic_upload` are WireGuard's transfer
// counters, i.e. the bytes of the encrypted transport messages: every inner IP packet (TCP payload + 20 bytes IPv4 +
// 32 bytes TCP with timestamps), zero-padded to a multiple of 16 (at most to the MTU), + 32 bytes (16 header, 16
// tag), plus the handshakes, keepalives and the other direction's ACKs. At MTU 1420 a full segment carries 1368
// payload bytes in 1420 + 32 counted bytes, and a smaller one more per byte, so N pushed bytes count at least
// N × 1452/1368 (≈ +6.1 %).
//
// What the path guarantees, and all the test asserts (a busy 2-core machine drops packets in the userspace daemons,
// and TCP sends them again): the side that receives counts at most what the side that sends counted; the difference
// is what was lost on the way, which the sender's retransmitted TCP segments (the kernel's TcpRetransSegs of its
// namespace, each at most one full transport message), the other direction's pure ACKs (never resent), the segments
// in flight when iperf3 ended its test (its sender wrote bytes its receiver never read: the connection is closed under
// them and they are never sent again; each at most one full message per MSS) and a little non-TCP traffic (pings,
// handshakes, keepalives, reads a moment apart) explain. The panel counts the server's side:
// upload is what it received, download what it sent. Each figure is compared with the client's own counters.
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
/** Counted bytes per pushed byte at MTU 1420, at least (see the header). */
const OVERHEAD = 1452 / 1368;
/** Counted bytes of one full transport message at MTU 1420 (1420 + 32): the most one lost segment can account for. */
const MAX_MESSAGE = 1452;
const MB = 1024 * 1024;
/** TCP payload of one full segment at MTU 1420 (1420 - 20 IPv4 - 32 TCP with timestamps). */
const MSS = 1368;
/** iperf3 pacing: what two shared cores usually carry through two userspace daemons (losses are allowed for below). */
const PACE = '40M';
/** Opposite-direction bytes (TCP ACKs) counted per pushed byte at most; lost ones are never sent again. */
const ACKS = 0.06;
/** Non-TCP bytes a phase may lose or count on one side only: pings, handshakes, keepalives, reads a moment apart. */
const SLACK = 64 * 1024;

/** Upload and download figures (the panel's) or counters (the client's: upload = its tx, download = its rx). */
interface Flow {
  upload: number;
  download: number;
}

/** What one phase moved, seen from both ends, and the TCP segments each end sent again meanwhile. */
interface Phase {
  what: string;
  panel: Flow;
  client: Flow;
  /** Payload iperf3's receiver got, per direction. */
  pushed: Flow;
  /** Payload iperf3's sender wrote that its receiver never got (cut off when the test ended), per direction. */
  unreceived: Flow;
  retransmitted: { client: number; server: number };
}

/**
 * The path's guarantees for one phase (see the header), per direction: the receiver counted at most what the sender
 * counted; the sender's figure holds the payload with its overhead; what the receiver lacks is explained by the
 * sender's retransmissions, the other direction's ACKs and {@link SLACK}.
 */
function assertPath(p: Phase): void {
  const directions = [
    { name: 'upload', sent: p.client.upload, received: p.panel.upload, payload: p.pushed.upload, resent: p.retransmitted.client, acks: p.pushed.download, cut: p.unreceived.upload },
    { name: 'download', sent: p.panel.download, received: p.client.download, payload: p.pushed.download, resent: p.retransmitted.server, acks: p.pushed.upload, cut: p.unreceived.download },
  ];
  for (const d of directions) {
    const what = `${p.what}, ${d.name}`;
    assert.ok(d.received <= d.sent + SLACK, `${what}: the receiver counted ${d.received}, more than the ${d.sent} sent`);
    assert.ok(Math.min(d.sent, d.received + SLACK) >= d.payload * OVERHEAD,
      `${what}: ${d.received} received / ${d.sent} sent for ${d.payload} pushed (× ${OVERHEAD.toFixed(4)} at least)`);
    const explained = (d.resent + Math.ceil(d.cut / MSS)) * MAX_MESSAGE + d.acks * ACKS + SLACK;
    assert.ok(d.sent - d.received <= explained,
      `${what}: ${d.sent - d.received} bytes lost on the way, more than the ${explained} that ${d.resent} retransmitted segments and ${d.cut} bytes cut off explain`);
    if (d.payload === 0) assert.ok(d.sent <= d.acks * ACKS + SLACK, `${what}: only the ACKs in this direction: ${d.sent}`);
  }
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
    /** Payload per direction iperf3's sender wrote beyond what its receiver got, over all pushes so far. */
    const unreceived: Flow = { upload: 0, download: 0 };
    /**
     * Pushes `bytes` client → server (`reverse`: server → client) with `iperf3 -n`, paced (`-b`); returns the bytes
     * iperf3's receiver got, and adds the bytes its sender wrote beyond them to {@link unreceived}.
     */
    const pushOne = async (bytes: number, reverse: boolean): Promise<number> => {
      const args = ['-c', SERVER_IP, '-n', String(bytes), '-b', PACE, '-J'];
      if (reverse) args.push('-R');
      const report = JSON.parse((await execIn(nsB!, 'iperf3', args, { timeoutMs: 120_000 })).stdout) as {
        end: { sum_received: { bytes: number }; sum_sent: { bytes: number } };
      };
      unreceived[reverse ? 'download' : 'upload'] += Math.max(0, report.end.sum_sent.bytes - report.end.sum_received.bytes);
      return report.end.sum_received.bytes;
    };
    /** The client's own counters: upload = its tx, download = its rx. */
    const clientCounters = async (): Promise<Flow> => {
      const peer = (await execIn(nsB!, 'wg', ['show', client, 'dump'])).stdout.trim().split('\n')[1].split('\t');
      return { download: Number(peer[5]), upload: Number(peer[6]) };
    };
    /** TCP segments `ns` sent again so far (TcpRetransSegs of /proc/net/snmp, which is per namespace). */
    const retransmitted = async (ns: string): Promise<number> => {
      const rows = (await execIn(ns, 'cat', ['/proc/net/snmp'])).stdout.split('\n').filter((l) => l.startsWith('Tcp:')).map((l) => l.trim().split(/\s+/));
      return Number(rows[1][rows[0].indexOf('RetransSegs')]);
    };
    /** The month's sums for alice. */
    const month = async (): Promise<Flow & { days: number }> => {
      const now = new Date();
      const entries = await api.ok<Array<{ traffic_download: number; traffic_upload: number }>>(
        'GET', `/account/alice/traffic_statistics/${now.getFullYear()}/${now.getMonth() + 1}`);
      return {
        download: entries.reduce((s, e) => s + e.traffic_download, 0),
        upload: entries.reduce((s, e) => s + e.traffic_upload, 0),
        days: entries.length,
      };
    };
    /** Both ends at one quiet moment (the panel's figures as its last sample left them). */
    const mark = async () => ({
      panel: await month(), client: await clientCounters(), server: await retransmitted(nsA), clientResent: await retransmitted(nsB!),
      unreceived: { ...unreceived },
    });
    type Mark = Awaited<ReturnType<typeof mark>>;
    const delta = (a: Flow, b: Flow): Flow => ({ upload: b.upload - a.upload, download: b.download - a.download });
    /** The phase from `from` to `to` (marks taken after the panel sampled), checked against the path's guarantees. */
    const check = (what: string, from: Mark, to: Mark, pushed: Flow, t: { diagnostic(msg: string): void }) => {
      const phase: Phase = {
        what, panel: delta(from.panel, to.panel), client: delta(from.client, to.client), pushed,
        unreceived: delta(from.unreceived, to.unreceived),
        retransmitted: { client: to.clientResent - from.clientResent, server: to.server - from.server },
      };
      t.diagnostic(`${what}: ${JSON.stringify(phase)}`);
      assertPath(phase);
    };
    await connect();
    iperf = await startIperfServer(nsA, SERVER_IP);

    await t.test('known amounts read back with the documented overhead, within what the path lost; the client agrees', async (st) => {
      const start = await mark();
      const up = await pushOne(20 * MB, false);
      await panel!.restart(); // SIGTERM: the last sample before stopping
      const dayBefore = new Date().getDate();
      const afterUp = await mark();
      const dayAfter = new Date().getDate(); // the read may straddle midnight
      assert.ok([dayBefore, dayAfter].includes(afterUp.panel.days), `one entry per day up to today: ${afterUp.panel.days}`);
      check('20 MB up', start, afterUp, { upload: up, download: 0 }, st);
      const down = await pushOne(30 * MB, true);
      await panel!.restart();
      const afterDown = await mark();
      check('30 MB down', afterUp, afterDown, { upload: 0, download: down }, st);
      check('both pushes', start, afterDown, { upload: up, download: down }, st);
    });

    await t.test('kill -9 mid-month, restart, push more: the sum, nothing lost or counted twice', async (st) => {
      const before = await mark();
      const first = await pushOne(10 * MB, false); // not sampled before the crash
      await panel!.kill('SIGKILL');
      await panel!.restart();
      for (let i = 0; i < 100 && (await api.ok<{ status: string }>('GET', '/system/status')).status !== 'OK'; i++) await new Promise((r) => setTimeout(r, 200));
      await ping();
      const second = await pushOne(5 * MB, false);
      await panel!.restart();
      check('10 MB up, kill -9, 5 MB up', before, await mark(), { upload: first + second, download: 0 }, st);
    });

    await t.test('disable/enable keeps the figures right; delete removes them; re-create starts at zero', async (st) => {
      const before = await mark();
      const first = await pushOne(8 * MB, false);
      await api.ok('PUT', '/account/alice', { status: 'disable' }); // parked: counted by the next sample
      await panel!.restart(); // the last sample at shutdown counts the parked peer and removes it
      const disabled = await mark();
      check('8 MB up, the parked peer sampled at shutdown', before, disabled, { upload: first, download: 0 }, st);
      await api.ok('PUT', '/account/alice', { status: 'enable' });
      await ping();
      const second = await pushOne(4 * MB, false);
      await panel!.restart();
      check('4 MB up after enable (the new peer counts from zero)', disabled, await mark(), { upload: second, download: 0 }, st);

      await api.ok('DELETE', '/account/alice');
      await connect(); // re-created with new keys: empty figures, counting from zero
      const fresh = await mark();
      assert.equal(fresh.panel.upload, 0);
      assert.equal(fresh.panel.download, 0);
      const third = await pushOne(6 * MB, false);
      await panel!.restart();
      check('6 MB up on the re-created account', fresh, await mark(), { upload: third, download: 0 }, st);
    });
  } finally {
    await iperf?.stop().catch(() => undefined);
    await panel?.cleanup().catch(() => undefined);
    if (nsB) await destroyNamespace(nsB);
    await destroyNamespace(nsA);
  }
});
