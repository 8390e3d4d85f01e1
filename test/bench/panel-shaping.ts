// Bench (not a test): one peer's shaping add/change/remove through TcShaper against a raw `tc class add` + `tc filter add`.
//
// Run as root: `node --import tsx test/bench/panel-shaping.ts [--sizes 1000,10000,50000] [--samples 30] [--bulk 10000]`.
// For each size a fresh network namespace gets a veth pair; its first end is shaped with that many peers (u32
// classification, both directions). Then, in the same tree, it times the median of: one peer added, changed and
// removed through the shaper (one `tc -batch`, both directions), and the raw floor: `tc class add` then
// `tc filter add` of one peer (two tc runs, one direction). Every command runs through `ip netns exec` on both
// sides. Last, one apply that changes the rate of min(size, bulk) peers (what set_bandwidth does). Nothing in the
// default namespace is touched; the namespace is removed at the end.
// With `--iperf` (on by default) the veth's other end lives in a second namespace holding one address of the shaped
// /16 that has no class (an unshaped peer): iperf3 measures its throughput both ways before the tree exists and
// again with every shaped peer installed — the per-packet cost of classification (u32 hash lookups) at that size.
import { parseArgs } from 'node:util';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { TcShaper } from '../../panel/dataplane/shaping/linux/tc-shaper.ts';
import type { ShapedPeer } from '../../panel/dataplane/shaping/shaping.ts';
import { createNamespace, destroyNamespace, execIn } from '../helpers/netns.ts';
import { measureMbit, startIperfServer } from '../helpers/iperf.ts';
import { hasTool, isRoot } from '../helpers/require-tools.ts';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,50000' },
    samples: { type: 'string', default: '30' },
    bulk: { type: 'string', default: '10000' },
    iperf: { type: 'boolean', default: true },
    'iperf-seconds': { type: 'string', default: '5' },
  },
  strict: true,
});
const SIZES = args.sizes!.split(',').map(Number);
const SAMPLES = Number(args.samples);
const BULK = Number(args.bulk);
const TARGET_RATIO = 3;
const TARGET_SIZE_RATIO = 1.3;
const TARGET_BULK_MS = 5000;
const TARGET_IPERF_SHARE = 0.8;
const IPERF_SECONDS = Number(args['iperf-seconds']);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n: number, digits = 2) => n.toFixed(digits);
/** Host `i` (0-based) of 10.90.0.0/16, skipping .0 and .255 of each /24 and the gateway's .1 of the first. */
const hostIp = (i: number) => {
  const n = i + 2;
  return `10.90.${Math.floor(n / 254)}.${(n % 254) + 1}`;
};
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
  /** iperf3 Mbit/s of the unshaped address, download (egress tree) and upload (IFB tree), without and with the tree. */
  iperf: { downBare: number; upBare: number; down: number; up: number } | null;
}

/** Download (egress of the shaped device) and upload (its ingress, through the IFB) rates from `ns` to `server`. */
async function throughput(ns: string, server: string): Promise<{ down: number; up: number }> {
  const down = await measureMbit(ns, server, { seconds: IPERF_SECONDS });
  const up = await measureMbit(ns, server, { seconds: IPERF_SECONDS, reverse: true });
  return { down, up };
}

async function measure(size: number): Promise<Row> {
  const ns = await createNamespace('vhb');
  const far = args.iperf ? await createNamespace('vhc') : null;
  let iperfServer: { stop(): Promise<void> } | null = null;
  try {
    const dev = 'vbench0';
    await execIn(ns, 'ip', ['link', 'add', dev, 'type', 'veth', 'peer', 'name', 'vbench1']);
    await execIn(ns, 'ip', ['link', 'set', dev, 'up']);
    // The unshaped address: the host right after the last spare, inside the shaped window and a populated /24.
    const unshaped = hostIp(size + SAMPLES);
    let bare: { down: number; up: number } | null = null;
    if (far) {
      await execIn(ns, 'ip', ['link', 'set', 'vbench1', 'netns', far]);
      await execIn(ns, 'ip', ['addr', 'add', '10.90.0.1/16', 'dev', dev]);
      await execIn(far, 'ip', ['addr', 'add', `${unshaped}/16`, 'dev', 'vbench1']);
      await execIn(far, 'ip', ['link', 'set', 'vbench1', 'up']);
      await execIn(far, 'ip', ['link', 'set', 'lo', 'up']);
      iperfServer = await startIperfServer(far, unshaped);
      bare = await throughput(ns, unshaped);
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
      // Raw floor on the same tree and the same hash bucket: class add + filter add, two tc runs.
      const [, , third, fourth] = spare(k).split('.').map(Number);
      const minor = (third << 8) | fourth;
      const handle = `${(0x100 + third).toString(16)}:${fourth.toString(16)}:1`;
      start = process.hrtime.bigint();
      await runner.run('tc', ['class', 'add', 'dev', dev, 'parent', '1:', 'classid', `1:${minor.toString(16)}`, 'htb', 'rate', '8mbit']);
      await runner.run('tc', [
        'filter', 'add', 'dev', dev, 'parent', '1:', 'prio', '1', 'protocol', 'ip', 'handle', handle, 'u32',
        'ht', `${(0x100 + third).toString(16)}:${fourth.toString(16)}:`, 'match', 'ip', 'dst', `${spare(k)}/32`, 'flowid', `1:${minor.toString(16)}`,
      ]);
      raw.push(since(start));
      await runner.run('tc', ['-batch', '-'], {
        input: `filter del dev ${dev} parent 1: prio 1 protocol ip handle ${handle} u32\nclass del dev ${dev} classid 1:${minor.toString(16)}\n`,
      });
    }
    const bulkPeers = Math.min(size, BULK);
    start = process.hrtime.bigint();
    await shaper.apply(target, { upsert: peers.slice(0, bulkPeers).map((p) => ({ ...p, downloadMbit: 20, uploadMbit: 10 })), remove: [] });
    const bulkMs = since(start);
    const loaded = bare ? await throughput(ns, unshaped) : null;
    const iperf = bare && loaded ? { downBare: bare.down, upBare: bare.up, down: loaded.down, up: loaded.up } : null;
    return { size, ensureMs, add: median(add), change: median(change), remove: median(remove), raw: median(raw), bulkPeers, bulkMs, iperf };
  } finally {
    await iperfServer?.stop();
    if (far) await destroyNamespace(far);
    await destroyNamespace(ns);
  }
}

async function main(): Promise<number> {
  const missing = ['ip', 'tc'].filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) {
    process.stderr.write(`panel-shaping bench needs: ${missing.join(', ')}\n`);
    return 2;
  }
  process.stdout.write(`panel-shaping bench: sizes ${SIZES.join(', ')}, ${SAMPLES} samples each, bulk ${BULK}\n`);
  process.stdout.write('size    ensure ms  add ms  change ms  remove ms  raw ms  add/raw  change/raw  remove/raw  bulk peers  bulk ms\n');
  const rows: Row[] = [];
  for (const size of SIZES) {
    const r = await measure(size);
    rows.push(r);
    process.stdout.write(
      `${String(size).padEnd(7)} ${fmt(r.ensureMs, 0).padStart(9)}  ${fmt(r.add).padStart(6)}  ${fmt(r.change).padStart(9)}  ${fmt(r.remove).padStart(9)}  ` +
        `${fmt(r.raw).padStart(6)}  ${fmt(r.add / r.raw).padStart(7)}  ${fmt(r.change / r.raw).padStart(10)}  ${fmt(r.remove / r.raw).padStart(10)}  ` +
        `${String(r.bulkPeers).padStart(10)}  ${fmt(r.bulkMs, 0).padStart(7)}\n`,
    );
    if (r.iperf) {
      const i = r.iperf;
      process.stdout.write(
        `        iperf3 of an unshaped peer, Mbit/s: download ${fmt(i.downBare, 0)} without a tree, ${fmt(i.down, 0)} with ${size} shaped peers ` +
          `(${fmt((100 * i.down) / i.downBare, 1)}%); upload ${fmt(i.upBare, 0)} → ${fmt(i.up, 0)} (${fmt((100 * i.up) / i.upBare, 1)}%)\n`,
      );
    }
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (rows.length > 1) {
    process.stdout.write(
      `largest vs smallest (${last.size} vs ${first.size}): add ${fmt(last.add / first.add)}x, change ${fmt(last.change / first.change)}x, ` +
        `remove ${fmt(last.remove / first.remove)}x, raw ${fmt(last.raw / first.raw)}x (target ≤ ${TARGET_SIZE_RATIO}x)\n`,
    );
  }
  process.stdout.write(
    `targets: ours ≤ ${TARGET_RATIO}x the raw floor; bulk apply of 10,000 peers ≤ ${TARGET_BULK_MS} ms; ` +
      `unshaped throughput with the tree ≥ ${TARGET_IPERF_SHARE * 100}% of without\n`,
  );
  return 0;
}

process.exitCode = await main();
