// Shaping measured with iperf3 between two namespaces (veth: tc's egress/ingress path is the same as on WireGuard).
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { GROUP_MAJORS } from '../../panel/dataplane/render/tc-layout.ts';
import { TcShaper } from '../../panel/dataplane/shaping/linux/tc-shaper.ts';
import type { ShapedPeer } from '../../panel/dataplane/shaping/shaping.ts';
import { measureMbit, shapedRate, startIperfServer, type IperfServer } from '../helpers/iperf.ts';
import { createNamespace, destroyAll, execIn, vethPair } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { wgTunnel } from '../helpers/wg-tunnel.ts';

const TOOLS = ['ip', 'tc', 'iperf3', 'ss'];
const TOLERANCE = 0.15;

async function ifindex(ns: string, dev: string): Promise<number> {
  const out = await execIn(ns, 'ip', ['-j', 'link', 'show', 'dev', dev]);
  return (JSON.parse(out.stdout) as Array<{ ifindex: number }>)[0].ifindex;
}

async function rootSentBytes(ns: string, dev: string): Promise<number> {
  const out = await execIn(ns, 'tc', ['-s', 'qdisc', 'show', 'dev', dev]);
  const m = /qdisc htb 1: root[^\n]*\n Sent (\d+) bytes/.exec(out.stdout);
  assert.ok(m, out.stdout);
  return Number(m[1]);
}

/** Bytes sent by each peer class of a device (the classes of the /24 groups' child HTBs), by minor. */
async function classBytes(ns: string, dev: string): Promise<Map<number, number>> {
  const out = await execIn(ns, 'tc', ['-s', 'class', 'show', 'dev', dev]);
  const map = new Map<number, number>();
  for (const m of out.stdout.matchAll(/class htb ([0-9a-f]+):([0-9a-f]+) [^\n]*\n Sent (\d+) bytes/g)) {
    if (m[1] !== '1') map.set(parseInt(m[2], 16), Number(m[3]));
  }
  return map;
}

const measured: string[] = [];

/** `measure`'s shaped rate within ±15% of `expected` Mbit/s (see shapedRate), noted for the summary line. */
async function within(measure: () => Promise<number>, expected: number, what: string): Promise<void> {
  const rate = await shapedRate(measure, expected, what, TOLERANCE);
  measured.push(`${what} ${rate.all.map((m) => m.toFixed(2)).join(',')}/${expected}`);
}

describe('shaping measured with iperf3', () => {
  after(() => destroyAll());

  it('5,000 peers in 20 /24 groups: 8 Mbit/s both ways over IPv4 and IPv6, a change in place, 0 lifts the limit', async (t: TestContext) => {
    if (!requireTools(t, TOOLS, { root: true })) return;
    const gw = await createNamespace('vhg');
    const cl = await createNamespace('vhc');
    let server: IperfServer | null = null;
    try {
      const { a: dev } = await vethPair(gw, cl, '10.70.0.1/16', '10.70.19.200/16');
      const shaper = new TcShaper({ runner: new ExecaRunner({ netns: gw }) });
      assert.equal((await shaper.capabilities()).u32, true);
      const target = { name: dev, address: '10.70.0.1/16' };
      // 5,000 synthetic peers in 10.70.0.2 .. 10.70.19.x (plus the real client): more than a u32 bucket's 4,095 nodes.
      const peers: ShapedPeer[] = [];
      for (let host = 2; peers.length < 5000; host++) {
        if (host % 256 === 0 || host % 256 === 255 || host === 19 * 256 + 200) continue;
        peers.push({ key: `p${host}`, ipv4: `10.70.${host >> 8}.${host & 255}`, ipv6: null, downloadMbit: 1 + (host % 7), uploadMbit: 1 + (host % 5) });
      }
      const client: ShapedPeer = { key: 'client', ipv4: '10.70.19.200', ipv6: 'fd70::13c8', downloadMbit: 8, uploadMbit: 8 };
      await execIn(gw, 'ip', ['-6', 'addr', 'add', 'fd70::1/64', 'dev', dev, 'nodad']);
      const peerDev = (await execIn(cl, 'ip', ['-o', 'link', 'show', 'type', 'veth'])).stdout.split(':')[1].trim().split('@')[0];
      await execIn(cl, 'ip', ['-6', 'addr', 'add', 'fd70::13c8/64', 'dev', peerDev, 'nodad']);
      await shaper.ensure(target, [...peers, client]);
      const minor = 19 * 256 + 200;
      assert.match(await shaper.show(dev, 'client'), new RegExp(`class ${GROUP_MAJORS[19].toString(16)}:${minor.toString(16)} rate 8Mbit`));
      const view = await shaper.show(dev);
      assert.equal((view.match(/^ {2}class /gm) ?? []).length, 2 * 5001);

      server = await startIperfServer(gw, '10.70.0.1');
      await within(() => measureMbit(cl, '10.70.0.1', { reverse: true }), 8, 'download');
      await within(() => measureMbit(cl, '10.70.0.1'), 8, 'upload');
      // IPv6 goes through the same classes (u32 tables on the address's last two bytes).
      const server6 = await startIperfServer(gw, 'fd70::1');
      try {
        await within(() => measureMbit(cl, 'fd70::1', { reverse: true, seconds: 3 }), 8, 'IPv6 download');
        await within(() => measureMbit(cl, 'fd70::1', { seconds: 3 }), 8, 'IPv6 upload');
      } finally {
        await server6.stop();
      }
      // Every byte went through the client's classes, none through a neighbour's.
      for (const d of [dev, `ifb-${dev}`]) {
        const bytes = await classBytes(gw, d);
        assert.ok((bytes.get(minor) ?? 0) > 1_000_000, `${d}: client class counted ${bytes.get(minor)}`);
        const others = [...bytes].filter(([m]) => m !== minor).reduce((n, [, b]) => n + b, 0);
        assert.equal(others, 0, `${d}: bytes in other classes`);
      }

      const ifb = await ifindex(gw, `ifb-${dev}`);
      const sentBefore = await rootSentBytes(gw, dev);
      await shaper.apply(target, { upsert: [{ ...client, downloadMbit: 4, uploadMbit: 12 }], remove: [] });
      await within(() => measureMbit(cl, '10.70.0.1', { reverse: true }), 4, 'download after the change');
      await within(() => measureMbit(cl, '10.70.0.1'), 12, 'upload after the change');
      assert.equal(await ifindex(gw, `ifb-${dev}`), ifb, 'the IFB device was not re-created');
      assert.ok((await rootSentBytes(gw, dev)) > sentBefore, 'the root qdisc kept its counters (not re-created)');

      await shaper.apply(target, { upsert: [{ ...client, downloadMbit: 0, uploadMbit: 0 }], remove: [] });
      assert.equal(await shaper.show(dev, 'client'), '');
      const down = await measureMbit(cl, '10.70.0.1', { reverse: true, seconds: 2 });
      const up = await measureMbit(cl, '10.70.0.1', { seconds: 2 });
      assert.ok(down > 40 && up > 40, `unlimited: download ${down.toFixed(1)}, upload ${up.toFixed(1)} Mbit/s`);
      t.diagnostic(`Mbit/s measured/limit: ${measured.join(', ')}; unlimited ${down.toFixed(0)}/${up.toFixed(0)}`);
    } finally {
      await server?.stop();
    }
  });

  it('over a WireGuard tunnel (wireguard-go): 8 Mbit/s both ways on the wg link and its IFB, a change in place', async (t: TestContext) => {
    if (!requireTools(t, [...TOOLS, 'wg', 'wireguard-go'], { root: true })) return;
    const gw = await createNamespace('vhg');
    const cl = await createNamespace('vhc');
    let server: IperfServer | null = null;
    try {
      const tunnel = await wgTunnel(gw, cl, '10.71.0');
      const shaper = new TcShaper({ runner: new ExecaRunner({ netns: gw }) });
      const target = { name: tunnel.server, address: '10.71.0.1/24' };
      const client: ShapedPeer = { key: 'client', ipv4: '10.71.0.2', ipv6: null, downloadMbit: 8, uploadMbit: 8 };
      const others = Array.from({ length: 100 }, (_, i) => ({ key: `o${i}`, ipv4: `10.71.0.${i + 3}`, ipv6: null, downloadMbit: 1, uploadMbit: 1 }));
      await shaper.ensure(target, [client, ...others]);
      server = await startIperfServer(gw, '10.71.0.1');
      await within(() => measureMbit(cl, '10.71.0.1', { reverse: true }), 8, 'wg download');
      await within(() => measureMbit(cl, '10.71.0.1'), 8, 'wg upload');
      for (const d of [tunnel.server, `ifb-${tunnel.server}`]) {
        const bytes = await classBytes(gw, d);
        assert.ok((bytes.get(2) ?? 0) > 1_000_000, `${d}: client class counted ${bytes.get(2)}`);
        assert.equal([...bytes].filter(([m]) => m !== 2).reduce((n, [, b]) => n + b, 0), 0, `${d}: bytes in other classes`);
      }
      await shaper.apply(target, { upsert: [{ ...client, downloadMbit: 4 }], remove: [] });
      await within(() => measureMbit(cl, '10.71.0.1', { reverse: true }), 4, 'wg download after the change');
      t.diagnostic(`Mbit/s measured/limit: ${measured.filter((m) => m.startsWith('wg')).join(', ')}`);
    } finally {
      await server?.stop();
    }
  });
});
