// Bench (not a test): suspend, unsuspend and delete of one account at N peers on the linux WireGuard driver, and the
// sample that settles the suspended (parked) peers.
//
// Run as root: `node --import tsx test/bench/panel-leaves.ts [--sizes 1000,10000,50000] [--rounds 15]`. The outer
// process makes a network namespace and re-runs itself inside it (`--inner`). Per size: an in-process panel app whose
// WireGuard seam is the real LinuxDriver (wireguard-go; firewall, shaping, IPsec and DNS are the twins) with N peers
// and accounts (test/bench/linux-wg-panel.ts). Then `--rounds` times, on a different account each time:
// PUT /account/<name> status=disable, PUT status=enable, and DELETE of another account (inject(), one at a time),
// next to the raw floor `wg set <if> peer <key> remove` of a peer of the same interface (one wg process). Printed: the
// medians, and each at N over the same at the smallest size (target <= 1.5x at 50,000 vs 1,000). Last, `--rounds`
// accounts are suspended and one scheduled sample (`TrafficStatisticsService.sampleAndSettle`: it counts and removes
// the parked peers) is timed next to a `wg show <if> dump`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, fmt } from './bench-math.ts';
import { linuxWgPanel, runInNamespace, type LinuxWgPanel } from './linux-wg-panel.ts';

const { values: args } = parseArgs({
  options: {
    inner: { type: 'boolean' },
    sizes: { type: 'string', default: '1000,10000,50000' },
    rounds: { type: 'string', default: '15' },
  },
  strict: true,
});
const SIZES = args.sizes.split(',').map(Number);
const ROUNDS = Number(args.rounds);
const TARGET = 1.5;

/** Medians (ms) of one size. */
interface Row {
  n: number;
  suspend: number;
  unsuspend: number;
  remove: number;
  floor: number;
  settle: number;
  dump: number;
  parked: number;
}

async function timed(panel: LinuxWgPanel, method: 'PUT' | 'DELETE', url: string, form?: Record<string, string>): Promise<number> {
  const t = performance.now();
  const res = await panel.app.inject({
    method, url: `/api/v1${url}`,
    headers: { cookie: panel.cookie, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    payload: form ? new URLSearchParams(form).toString() : undefined,
  });
  const ms = performance.now() - t;
  if (res.json().status !== 'success') throw new Error(`${method} ${url}: ${res.body}`);
  return ms;
}

async function measure(n: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-leaves-'));
  const panel = await linuxWgPanel(dir, n);
  try {
    const suspend: number[] = [];
    const unsuspend: number[] = [];
    const remove: number[] = [];
    const floor: number[] = [];
    const stride = Math.floor(n / (3 * ROUNDS + 2));
    for (let r = -1; r < ROUNDS; r++) { // round -1 warms up
      const a = (r + 1) * stride;
      const gone = n - 1 - (r + 1) * stride;
      const s = await timed(panel, 'PUT', `/account/a${a}`, { status: 'disable' });
      const u = await timed(panel, 'PUT', `/account/a${a}`, { status: 'enable' });
      const d = await timed(panel, 'DELETE', `/account/a${gone}`);
      // the floor: one wg process removing one peer (a deleted account's key, re-added first so there is one to remove)
      await panel.run.run('wg', ['set', panel.iface, 'peer', panel.keys[gone], 'allowed-ips', '']);
      const t = performance.now();
      await panel.run.run('wg', ['set', panel.iface, 'peer', panel.keys[gone], 'remove']);
      const f = performance.now() - t;
      if (r < 0) continue;
      suspend.push(s);
      unsuspend.push(u);
      remove.push(d);
      floor.push(f);
    }
    // the scheduled sample that settles ROUNDS suspended (parked) peers, next to the dump
    const statistics = panel.app.services.statistics as { sampleAndSettle?: () => Promise<{ parked: unknown[] }> };
    await panel.app.services.statistics.sampler.sample(); // baselines of every peer: the settling sample writes none
    for (let r = 0; r < ROUNDS; r++) await timed(panel, 'PUT', `/account/a${r * stride + 1}`, { status: 'disable' });
    let settle = Number.NaN;
    let parked = 0;
    if (statistics.sampleAndSettle) {
      const t = performance.now();
      parked = (await panel.app.services.dataplaneSync.serial(() => statistics.sampleAndSettle!())).parked.length;
      settle = performance.now() - t;
    }
    const dump: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      await panel.run.run('wg', ['show', panel.iface, 'dump']);
      dump.push(performance.now() - t);
    }
    await panel.app.services.statistics.sampler.close();
    return {
      n, suspend: median(suspend), unsuspend: median(unsuspend), remove: median(remove), floor: median(floor), settle, dump: median(dump), parked,
    };
  } finally {
    await panel.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function inner(): Promise<number> {
  const rows: Row[] = [];
  for (const n of SIZES) {
    const row = await measure(n);
    rows.push(row);
    process.stdout.write(`${n}: suspend ${fmt(row.suspend)} ms, unsuspend ${fmt(row.unsuspend)} ms, delete ${fmt(row.remove)} ms, ` +
      `wg set remove ${fmt(row.floor)} ms; settling sample ${fmt(row.settle)} ms (${row.parked} parked) vs dump ${fmt(row.dump)} ms\n`);
  }
  const base = rows[0];
  let ok = true;
  process.stdout.write(`\nmedian of ${ROUNDS}, ms; (x) = over the same at ${base.n.toLocaleString('en-US')} peers (target <= ${TARGET}x at 50,000)\n`);
  process.stdout.write('| peers | suspend | unsuspend | delete | wg set remove (floor) | settling sample | wg show dump |\n|---|---|---|---|---|---|---|\n');
  for (const r of rows) {
    const x = (v: number, b: number) => {
      const ratio = v / b;
      if (r.n >= 50_000 && ratio > TARGET) ok = false;
      return `${fmt(v)} (${ratio.toFixed(2)}x)`;
    };
    process.stdout.write(`| ${r.n.toLocaleString('en-US')} | ${x(r.suspend, base.suspend)} | ${x(r.unsuspend, base.unsuspend)} | ` +
      `${x(r.remove, base.remove)} | ${fmt(r.floor)} (${(r.floor / base.floor).toFixed(2)}x) | ${fmt(r.settle)} (${r.parked} parked) | ${fmt(r.dump)} |\n`);
  }
  return ok ? 0 : 1;
}

process.exitCode = await (args.inner
  ? inner()
  : runInNamespace(new URL(import.meta.url).pathname, ['--sizes', SIZES.join(','), '--rounds', String(ROUNDS)]));
