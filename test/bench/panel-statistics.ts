// Bench (not a test): a traffic-statistics sample and the API around it at N peers, next to a bare `wg show dump`.
//
// Run as root: `nice -n 10 node --import tsx test/bench/panel-statistics.ts [--sizes 1000,10000,50000] [--rounds 5]`
// (`--quick`: 1,000 and 10,000 only). The outer process makes a network namespace and re-runs itself inside it
// (`--inner`). Per size: an in-process panel app (buildApp, Fastify, a temp SQLite file) whose WireGuard seam is the
// real LinuxDriver (firewall, shaping, IPsec and DNS twins: not measured here) creates a server through POST
// /wireguard (a wireguard-go interface), gets N peers with `wg addconf` and N accounts written through the
// repository, and then prints:
//   (a) one sample (counter read + deltas + SQLite write, all in the sample worker thread: the worker reads the
//       counters over wireguard-go's UAPI socket) vs a bare `wg show <if> dump`, every peer's counters grown between
//       samples so every sample writes N day rows and N baselines (target <= 2x at 50,000). The growth comes from a
//       proxy in a child process (UAPI_GROWTH_PROXY_JS) on a socket in a temp directory the worker is pointed at:
//       it asks the real daemon's socket and adds 1,000/2,000 bytes per round to every rx_bytes/tx_bytes, so the
//       sample's time includes the real daemon's answer plus the proxy's rewrite (an overestimate of the real read);
//   (b) GET /account/<name> p99 over HTTP on loopback while samples run vs without one (4 clients in flight, in the
//       app's own process; target within 2x);
//   (c) GET /wireguard/online (the real dump read through LinuxDriver.inspect; no peer has a handshake, so the answer
//       is empty and the time is the read, parse and match) vs a bare `wg show <if> dump` (target <= 2x).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { request } from 'undici';
import { uapiSocketPath } from '../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { readUapiAnswer } from '../../panel/dataplane/wireguard/linux/uapi-transfers.ts';
import { TrafficSampler } from '../../panel/services/statistics/sampler.ts';
import { manualClock } from '../../shared/clock.ts';
import { TrafficStatisticsRepository } from '../../panel/store/repositories/traffic-statistics.ts';
import { median, fmt } from './bench-math.ts';
import { handshakeAll, wgClientKeys } from '../helpers/wg-handshakes.ts';
import { linuxWgPanel, runInNamespace, type LinuxWgPanel } from './linux-wg-panel.ts';

const { values: args } = parseArgs({
  options: {
    inner: { type: 'boolean' },
    quick: { type: 'boolean' },
    sizes: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    'online-only': { type: 'boolean' },
  },
  strict: true,
});
const SIZES = (args.sizes ?? (args.quick ? '1000,10000' : '1000,10000,50000')).split(',').map(Number);
const ROUNDS = Number(args.rounds);
const TARGET_RATIO = 2;
const CLIENTS = 4;

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

/**
 * A UAPI socket at argv[2] that answers every `get=1` with the real daemon's answer (asked at argv[1]) whose
 * rx_bytes/tx_bytes grew by 1,000/2,000 per round: counters that move for every peer without traffic to 50,000 peers.
 */
const UAPI_GROWTH_PROXY_JS = `
const net = require('node:net');
const [real, path] = process.argv.slice(1);
let round = 0;
net.createServer((client) => client.once('data', () => {
  const k = ++round;
  const chunks = [];
  const up = net.connect(real, () => up.write('get=1\\n\\n'));
  up.on('data', (d) => {
    const before = d.length > 1 ? d[d.length - 2] : chunks.length ? chunks[chunks.length - 1].at(-1) : -1;
    chunks.push(d);
    if (d[d.length - 1] !== 10 || before !== 10) return;
    const all = Buffer.concat(chunks);
    up.destroy();
    client.end(all.toString('latin1').replace(/^(rx|tx)_bytes=(\\d+)$/gm, (m, d, v) => d + '_bytes=' + (Number(v) + k * (d === 'rx' ? 1000 : 2000))));
  });
})).listen(path, () => process.stdout.write('ready\\n'));
`;

/** Starts the growth proxy in a child process; resolves once it listens (boxed: a subprocess is a thenable). */
async function startGrowthProxy(real: string, path: string): Promise<{ child: ResultPromise }> {
  const child = execa(process.execPath, ['-e', UAPI_GROWTH_PROXY_JS, real, path], { reject: false });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    void child.then((r) => reject(new Error(`growth proxy exited: ${r.stderr}`)));
  });
  return { child };
}

/** Runs CLIENTS sequential request loops of GET /account/<name> until `until()` says stop; returns latencies (ms). */
async function load(origin: string, cookie: string, n: number, until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  let k = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (!until()) {
      const t = performance.now();
      const res = await request(`${origin}/api/v1/account/a${(k++ * 7919) % n}`, { headers: { cookie } });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET /account: ${res.statusCode}`);
      times.push(performance.now() - t);
    }
  }));
  return times;
}

async function measure(n: number, rows: Record<'a' | 'uapi' | 'b' | 'c', string[]>): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-stats-'));
  const clients = wgClientKeys(n);
  const panel = await linuxWgPanel(dir, n, clients.map((c) => c.publicKey));
  const { app, iface, cookie, run } = panel;
  let ok = true;
  try {
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
    if (!args['online-only']) ok = (await sampleParts(panel, origin, rows)) && ok;

    // (c) every peer online (one real handshake each), then the listings vs the bare dump, interleaved
    await app.inject({
      method: 'PUT', url: '/api/v1/system/config', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'wireguard_handshake_uptime=300',
    });
    let t = performance.now();
    const shaken = await handshakeAll({ host: '127.0.0.1', port: panel.listenPort, serverPublicKey: panel.serverPublicKey, clients });
    process.stdout.write(`${n} peers: ${shaken} handshakes in ${fmt((performance.now() - t) / 1000)} s\n`);
    const onlineMs: number[] = [];
    const peersMs: number[] = [];
    const floor: number[] = [];
    let listed = 0;
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      const res = await request(`${origin}/api/v1/wireguard/online`, { headers: { cookie } });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET /wireguard/online: ${res.statusCode}`);
      onlineMs.push(performance.now() - t);
      listed = (JSON.parse(body).msg as unknown[]).length;
      t = performance.now();
      const peers = await request(`${origin}/api/v1/wireguard/bench/peers`, { headers: { cookie } });
      await peers.body.text();
      peersMs.push(performance.now() - t);
      t = performance.now();
      await run.run('wg', ['show', iface, 'dump']);
      floor.push(performance.now() - t);
    }
    const or = median(onlineMs) / median(floor);
    if (n >= 50_000 && or > TARGET_RATIO) ok = false;
    rows.c.push(`| ${n.toLocaleString('en-US')} | ${listed.toLocaleString('en-US')} | ${fmt(median(floor))} | ${fmt(median(onlineMs))} (${or.toFixed(2)}x) | ` +
      `${fmt(median(peersMs))} (${(median(peersMs) / median(floor)).toFixed(2)}x) |`);
    process.stdout.write(`${n}: /wireguard/online (${listed} online) ${or.toFixed(2)}x dump\n`);
  } finally {
    await panel.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return ok;
}

/** Parts (a) and (b): the sample and GET /account/<name> around it. */
async function sampleParts(panel: LinuxWgPanel, origin: string, rows: Record<'a' | 'uapi' | 'b' | 'c', string[]>): Promise<boolean> {
  const { db, iface, cookie, driver, run, repo } = panel;
  const n = panel.keys.length;
  let ok = true;
  let proxy: ResultPromise | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-uapi-'));
  try {
    const dumpMs: number[] = [];
    const dump = async () => {
      const t = performance.now();
      await run.run('wg', ['show', iface, 'dump']);
      dumpMs.push(performance.now() - t);
    };
    for (let r = 0; r < ROUNDS; r++) await dump();

    // (a) one sample: the worker reads the counters through the growth proxy, so every peer moved
    const proxyDir = dir;
    proxy = (await startGrowthProxy(uapiSocketPath(iface), uapiSocketPath(iface, proxyDir))).child;
    const clock = manualClock(new Date('2026-03-15T12:00:00Z'));
    const sampler = new TrafficSampler({
      repo: new TrafficStatisticsRepository(db), wireguard: driver, uapiDir: proxyDir, clock, timeZone: 'UTC',
      onAccountsChanged: (l) => repo.onRowsChanged(l),
    });
    await sampler.sample(); // first sighting: baselines, then a day row per peer
    const sampleMs: number[] = [];
    const engineMs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      clock.advance(300_000);
      const result = await sampler.sample();
      if (result.peers !== n || result.download !== n * 2000) throw new Error(`sample saw ${result.peers} of ${n} peers`);
      sampleMs.push(result.durationMs);
      engineMs.push(result.engineMs);
      await dump(); // the floor interleaved, under the same load
    }
    // what the proxy adds to (a): one get=1 answer from the real socket and through the proxy (not a sample)
    const uapiMs: number[] = [];
    const proxiedMs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [times, path] of [[uapiMs, undefined], [proxiedMs, proxyDir]] as const) {
        const t = performance.now();
        await readUapiAnswer(iface, { dir: path, timeoutMs: 120_000 });
        times.push(performance.now() - t);
      }
    }
    rows.uapi.push(`| ${n.toLocaleString('en-US')} | ${fmt(median(uapiMs))} | ${fmt(median(proxiedMs))} |`);
    const ratio = median(sampleMs) / median(dumpMs);
    const verdict = n >= 50_000 ? (ratio <= TARGET_RATIO ? 'ok' : 'ABOVE TARGET') : '';
    if (verdict === 'ABOVE TARGET') ok = false;
    rows.a.push(`| ${n.toLocaleString('en-US')} | ${fmt(median(dumpMs))} | ${fmt(median(sampleMs))} | ${fmt(median(engineMs))} | ${ratio.toFixed(2)}x | ${verdict} |`);

    // (b) GET /account/<name> p99 with and without a sample running
    await load(origin, cookie, n, ((end) => () => performance.now() > end)(performance.now() + 500)); // warm
    const quiet: number[] = [];
    const busy: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t = performance.now();
      quiet.push(...(await load(origin, cookie, n, () => performance.now() - t > Math.max(300, median(sampleMs)))));
      clock.advance(300_000);
      let sampling = true;
      const sample = sampler.sample().finally(() => (sampling = false));
      busy.push(...(await load(origin, cookie, n, () => !sampling)));
      await sample;
    }
    const pr = p99(busy) / p99(quiet);
    rows.b.push(`| ${n.toLocaleString('en-US')} | ${fmt(p99(quiet))} (${quiet.length}) | ${fmt(p99(busy))} (${busy.length}) | ${pr.toFixed(2)}x |`);

    process.stdout.write(`${n}: sample ${ratio.toFixed(2)}x dump; GET /account p99 ${pr.toFixed(2)}x\n`);
    await sampler.close();
  } finally {
    proxy?.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return ok;
}

async function inner(): Promise<number> {
  const rows = { a: [] as string[], uapi: [] as string[], b: [] as string[], c: [] as string[] };
  let ok = true;
  for (const n of SIZES) ok = (await measure(n, rows)) && ok;
  process.stdout.write(`\n(a) median of ${ROUNDS}; target at 50,000: sample <= ${TARGET_RATIO}x dump\n`);
  process.stdout.write('| peers | wg show dump (ms) | one sample (ms) | of it the engine (worker, ms) | ratio | target |\n|---|---|---|---|---|---|\n');
  process.stdout.write(`${rows.a.join('\n')}\n`);
  process.stdout.write(`\n(a) what the growth proxy adds: one UAPI get=1 answer read (bench thread), median of ${ROUNDS}\n`);
  process.stdout.write('| peers | real socket (ms) | through the proxy (ms) |\n|---|---|---|\n');
  process.stdout.write(`${rows.uapi.join('\n')}\n`);
  process.stdout.write(`\n(b) GET /account/<name>, ${CLIENTS} clients in flight, p99 ms (requests)\n`);
  process.stdout.write('| accounts | no sample | during samples | ratio |\n|---|---|---|---|\n');
  process.stdout.write(`${rows.b.join('\n')}\n`);
  process.stdout.write(`\n(c) every peer after a real handshake: the listings vs wg show dump, median of ${ROUNDS} (target <= ${TARGET_RATIO}x at 50,000)\n`);
  process.stdout.write('| peers | online | wg show dump (ms) | GET /wireguard/online (ms) | GET /wireguard/<name>/peers (ms) |\n|---|---|---|---|---|\n');
  process.stdout.write(`${rows.c.join('\n')}\n`);
  return ok ? 0 : 1;
}

process.exitCode = await (args.inner
  ? inner()
  : runInNamespace(new URL(import.meta.url).pathname,
    ['--sizes', SIZES.join(','), '--rounds', String(ROUNDS), ...(args['online-only'] ? ['--online-only'] : [])]));
