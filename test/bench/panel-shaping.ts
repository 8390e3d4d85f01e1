// Bench (not a test): one peer's shaping add/change/remove through TcShaper against a raw `tc class add` + `tc filter add`.
//
// Run as root: `node --import tsx test/bench/panel-shaping.ts [--sizes 1000,10000,50000] [--samples 30] [--bulk 10000]`.
// For each size a fresh network namespace gets a veth pair; its first end is shaped with that many peers (one child
// HTB per /24, u32 classification, both directions): the full `ensure` (a rebuild) and its cost per peer. Then, in
// the same tree, it times the median of: one peer added, changed and removed through the shaper (one `tc -batch`,
// both directions), and the raw floor: `tc class add` then `tc filter add` of one peer in its group (two tc runs,
// one direction). Every command runs through `ip netns exec` on both sides. Last, one apply that changes the rate of
// min(size, bulk) peers (what set_bandwidth does). Nothing in the default namespace is touched; the namespace is
// removed at the end.
// With `--iperf` (on by default) the veth's other end lives in a second namespace holding one address of the shaped
// /16 that has no class (an unshaped peer), and a second veth pair without any tree links the same two namespaces:
// with every shaped peer installed, iperf3 measures both ways through the shaped device and through the bare one,
// alternating (`--iperf-rounds`, medians), so a busy machine weighs on both alike. The ratio is the per-packet cost
// of classification (u32 hash lookups, the IFB redirect) at that size.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { GROUP_MAJORS } from '../../panel/dataplane/render/tc-layout.ts';
import { TcShaper } from '../../panel/dataplane/shaping/linux/tc-shaper.ts';
import type { ShapedPeer } from '../../panel/dataplane/shaping/shaping.ts';
import { createNamespace, destroyNamespace, execIn, vethPair } from '../helpers/netns.ts';
import { measureMbit, startIperfServer } from '../helpers/iperf.ts';
import { benchNeeds, hostIp16, median, fmt as fmtDigits } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,50000' },
    samples: { type: 'string', default: '30' },
    bulk: { type: 'string', default: '10000' },
    iperf: { type: 'boolean', default: true },
    'iperf-seconds': { type: 'string', default: '4' },
    'iperf-rounds': { type: 'string', default: '3' },
  },
  strict: true,
});
const SIZES = args.sizes!.split(',').map(Number);
const SAMPLES = Number(args.samples);
const BULK = Number(args.bulk);
const TARGET_RATIO = 3;
const TARGET_SIZE_RATIO = 1.5;
const TARGET_ENSURE_MS = 60_000;
const TARGET_BULK_MS = 5000;
const TARGET_IPERF_SHARE = 0.8;
const IPERF_SECONDS = Number(args['iperf-seconds']);
const IPERF_ROUNDS = Number(args['iperf-rounds']);
/** The far end of the bare veth pair (no tree on either side). */
const BARE_FAR = '10.91.0.2';

const hostIp = (i: number) => hostIp16('10.90', i);
const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

interface Row {
  size: number;
  ensureMs: number;
  add: number;
  change: number;
  remove: number;
  raw: number;
  bulkPeers: number;
  bulkMs: number;
  /** Median iperf3 Mbit/s, download and upload, through the bare veth and through the shaped one (unshaped address). */
  iperf: { downBare: number; upBare: number; down: number; up: number } | null;
}

/** Download (egress of the shaped device) and upload (its ingress, through the IFB) rates from `ns` to `server`. */
const fmt = (n: number, digits = 2) => fmtDigits(n, digits);

async function throughput(ns: string, server: string): Promise<{ down: number; up: number }> {
  const down = await measureMbit(ns, server, { seconds: IPERF_SECONDS });
  const up = await measureMbit(ns, server, { seconds: IPERF_SECONDS, reverse: true });
  return { down, up };
}

async function measure(size: number): Promise<Row> {
  const ns = await createNamespace('vhb');
  const far = args.iperf ? await createNamespace('vhc') : null;
  const iperfServers: Array<{ stop(): Promise<void> }> = [];
  try {
    const dev = 'vbench0';
    await execIn(ns, 'ip', ['link', 'add', dev, 'type', 'veth', 'peer', 'name', 'vbench1']);
    await execIn(ns, 'ip', ['link', 'set', dev, 'up']);
    // The unshaped address: the host right after the last spare, inside the shaped window and a populated /24.
    const unshaped = hostIp(size + SAMPLES);
    if (far) {
      await execIn(ns, 'ip', ['link', 'set', 'vbench1', 'netns', far]);
      await execIn(ns, 'ip', ['addr', 'add', '10.90.0.1/16', 'dev', dev]);
      await execIn(far, 'ip', ['addr', 'add', `${unshaped}/16`, 'dev', 'vbench1']);
      await execIn(far, 'ip', ['link', 'set', 'vbench1', 'up']);
      await vethPair(ns, far, '10.91.0.1/24', `${BARE_FAR}/24`);
      iperfServers.push(await startIperfServer(far, unshaped), await startIperfServer(far, BARE_FAR));
    }
    const runner = new ExecaRunner({ netns: ns, timeoutMs: 600_000 });
    const shaper = new TcShaper({ runner });
    const target = { name: dev, address: '10.90.0.1/16' };
    const peers: ShapedPeer[] = Array.from({ length: size }, (_, i) => ({ key: `p${i}`, ipv4: hostIp(i), ipv6: null, downloadMbit: 8, uploadMbit: 4 }));
    let start = process.hrtime.bigint();
    await shaper.ensure(target, peers);
    const ensureMs = since(start);
    const spare = (k: number) => hostIp(size + k);
    const add: number[] = [];
    const change: number[] = [];
    const remove: number[] = [];
    const raw: number[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      const peer: ShapedPeer = { key: `s${k}`, ipv4: spare(k), ipv6: null, downloadMbit: 8, uploadMbit: 4 };
      start = process.hrtime.bigint();
      await shaper.apply(target, { upsert: [peer], remove: [] });
      add.push(since(start));
      start = process.hrtime.bigint();
      await shaper.apply(target, { upsert: [{ ...peer, downloadMbit: 9 }], remove: [] });
      change.push(since(start));
      start = process.hrtime.bigint();
      await shaper.apply(target, { upsert: [], remove: [peer.key] });
      remove.push(since(start));
      // Raw floor in the same tree, group and hash bucket: class add + filter add, two tc runs.
      const [, , third, fourth] = spare(k).split('.').map(Number);
      const id = `${GROUP_MAJORS[third].toString(16)}:${((third << 8) | fourth).toString(16)}`;
      const group = `${GROUP_MAJORS[third].toString(16)}:`;
      const handle = `1:${fourth.toString(16)}:1`;
      start = process.hrtime.bigint();
      await runner.run('tc', ['class', 'add', 'dev', dev, 'parent', group, 'classid', id, 'htb', 'rate', '8mbit']);
      await runner.run('tc', [
        'filter', 'add', 'dev', dev, 'parent', group, 'prio', '1', 'protocol', 'ip', 'handle', handle, 'u32',
        'ht', `1:${fourth.toString(16)}:`, 'match', 'ip', 'dst', `${spare(k)}/32`, 'flowid', id,
      ]);
      raw.push(since(start));
      await runner.run('tc', ['-batch', '-'], {
        input: `filter del dev ${dev} parent ${group} prio 1 protocol ip handle ${handle} u32\nclass del dev ${dev} classid ${id}\n`,
      });
    }
    const bulkPeers = Math.min(size, BULK);
    start = process.hrtime.bigint();
    await shaper.apply(target, { upsert: peers.slice(0, bulkPeers).map((p) => ({ ...p, downloadMbit: 20, uploadMbit: 10 })), remove: [] });
    const bulkMs = since(start);
    let iperf: Row['iperf'] = null;
    if (far) {
      const runs = { downBare: [] as number[], upBare: [] as number[], down: [] as number[], up: [] as number[] };
      for (let round = 0; round < IPERF_ROUNDS; round++) {
        const bare = await throughput(ns, BARE_FAR);
        const shaped = await throughput(ns, unshaped);
        runs.downBare.push(bare.down);
        runs.upBare.push(bare.up);
        runs.down.push(shaped.down);
        runs.up.push(shaped.up);
      }
      iperf = { downBare: median(runs.downBare), upBare: median(runs.upBare), down: median(runs.down), up: median(runs.up) };
    }
    return { size, ensureMs, add: median(add), change: median(change), remove: median(remove), raw: median(raw), bulkPeers, bulkMs, iperf };
  } finally {
    for (const server of iperfServers) await server.stop();
    if (far) await destroyNamespace(far);
    await destroyNamespace(ns);
  }
}

async function main(): Promise<number> {
  if (benchNeeds('panel-shaping', ['ip', 'tc'])) return 2;
  process.stdout.write(`panel-shaping bench: sizes ${SIZES.join(', ')}, ${SAMPLES} samples each, bulk ${BULK}\n`);
  process.stdout.write(`load average at the start: ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
  process.stdout.write('size    ensure ms  per peer ms  add ms  change ms  remove ms  raw ms  add/raw  change/raw  remove/raw  bulk peers  bulk ms\n');
  const rows: Row[] = [];
  for (const size of SIZES) {
    const r = await measure(size);
    rows.push(r);
    process.stdout.write(
      `${String(size).padEnd(7)} ${fmt(r.ensureMs, 0).padStart(9)}  ${fmt(r.ensureMs / size, 3).padStart(11)}  ${fmt(r.add).padStart(6)}  ${fmt(r.change).padStart(9)}  ${fmt(r.remove).padStart(9)}  ` +
        `${fmt(r.raw).padStart(6)}  ${fmt(r.add / r.raw).padStart(7)}  ${fmt(r.change / r.raw).padStart(10)}  ${fmt(r.remove / r.raw).padStart(10)}  ` +
        `${String(r.bulkPeers).padStart(10)}  ${fmt(r.bulkMs, 0).padStart(7)}\n`,
    );
    if (r.iperf) {
      const i = r.iperf;
      process.stdout.write(
        `        iperf3 of an unshaped peer, median Mbit/s: download ${fmt(i.down, 0)} through the tree of ${size} shaped peers vs ` +
          `${fmt(i.downBare, 0)} bare (${fmt((100 * i.down) / i.downBare, 1)}%); upload ${fmt(i.up, 0)} vs ${fmt(i.upBare, 0)} ` +
          `(${fmt((100 * i.up) / i.upBare, 1)}%)\n`,
      );
    }
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (rows.length > 1) {
    process.stdout.write(
      `largest vs smallest (${last.size} vs ${first.size}): ensure per peer ${fmt(last.ensureMs / last.size / (first.ensureMs / first.size))}x, ` +
        `add ${fmt(last.add / first.add)}x, change ${fmt(last.change / first.change)}x, remove ${fmt(last.remove / first.remove)}x, ` +
        `raw ${fmt(last.raw / first.raw)}x (target ≤ ${TARGET_SIZE_RATIO}x)\n`,
    );
  }
  process.stdout.write(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
  process.stdout.write(
    `targets: ours ≤ ${TARGET_RATIO}x the raw floor; ensure of the largest ≤ ${TARGET_ENSURE_MS} ms; bulk apply of 10,000 peers ≤ ${TARGET_BULK_MS} ms; ` +
      `unshaped throughput with the tree ≥ ${TARGET_IPERF_SHARE * 100}% of without\n`,
  );
  return 0;
}

process.exitCode = await main();
