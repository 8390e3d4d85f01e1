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
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { request } from 'undici';
import { buildApp } from '../../panel/app.ts';
import { createSimulatedDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { LinuxDriver } from '../../panel/dataplane/linux/linux-driver.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { uapiSocketPath } from '../../panel/dataplane/linux/uapi-socket.ts';
import { readUapiAnswer } from '../../panel/dataplane/linux/uapi-transfers.ts';
import { TrafficSampler } from '../../panel/services/statistics/sampler.ts';
import { manualClock } from '../../panel/shared/clock.ts';
import { SecretBox } from '../../panel/shared/secret-box.ts';
import { openDatabase } from '../../panel/store/db.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { TrafficStatisticsRepository } from '../../panel/store/repositories/traffic-statistics.ts';
import { createNamespace, destroyNamespace } from '../helpers/netns.ts';
import { ROOT } from '../helpers/panel-process.ts';
import { hasTool, isRoot } from '../helpers/require-tools.ts';
import { median, fmt } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    inner: { type: 'boolean' },
    quick: { type: 'boolean' },
    sizes: { type: 'string' },
    rounds: { type: 'string', default: '5' },
  },
  strict: true,
});
const SIZES = (args.sizes ?? (args.quick ? '1000,10000' : '1000,10000,50000')).split(',').map(Number);
const ROUNDS = Number(args.rounds);
const TARGET_RATIO = 2;
const CLIENTS = 4;

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

async function outer(): Promise<number> {
  const missing = ['wg', 'wireguard-go', 'ip'].filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) {
    process.stderr.write(`bench needs: ${missing.join(', ')}\n`);
    return 2;
  }
  const ns = await createNamespace('vhbs');
  try {
    const child = execa('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', new URL(import.meta.url).pathname,
      '--inner', '--sizes', SIZES.join(','), '--rounds', String(ROUNDS)], { cwd: ROOT, stdio: 'inherit', reject: false, timeout: 2 * 60 * 60_000 });
    return (await child).exitCode ?? 1;
  } finally {
    await destroyNamespace(ns);
  }
}

/** A panel app on the linux WireGuard driver with one server holding `n` peers and `n` accounts. */
async function setup(n: number, dir: string) {
  // `wg addconf` of 50,000 peers into wireguard-go takes minutes: past the runner's default 30 s.
  const run = new ExecaRunner({ timeoutMs: 30 * 60_000 });
  const driver = new LinuxDriver({ runner: run, stateDir: join(dir, 'state'), wireguard: 'userspace' });
  const db = openDatabase(join(dir, 'panel.db'));
  const box = SecretBox.open(dir);
  const app = buildApp({
    db, dataplane: createSimulatedDataplane({ wireguard: driver }), dataDir: dir, secretBox: box, baseUrl: 'http://127.0.0.1',
    version: 'bench', timeZone: 'UTC',
  });
  await app.ready();
  const { hash } = app.services.accessHashes.create('127.0.0.1');
  const cookie = `access_hash=${hash}`;
  const created = await app.inject({
    method: 'POST', url: '/api/v1/wireguard', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ name: 'bench', address: '10.64.0.1/10' }).toString(),
  });
  const server = created.json().msg as { interface_name: string };
  if (!server?.interface_name) throw new Error(`POST /wireguard: ${created.body}`);
  const iface = server.interface_name;
  const keys = Array.from({ length: n }, () => randomBytes(32).toString('base64'));
  const file = join(dir, `${iface}.conf`);
  writeFileSync(file, keys.map((k, i) => `[Peer]\nPublicKey = ${k}\nAllowedIPs = ${ip(i)}/32\n`).join(''), { mode: 0o600 });
  const t = performance.now();
  await run.run('wg', ['addconf', iface, file]);
  process.stdout.write(`${n} peers: wg addconf ${fmt((performance.now() - t) / 1000)} s\n`);
  const repo = new AccountsRepository(db);
  const serverId = (db.prepare('SELECT id FROM wireguard_servers').get() as { id: number }).id;
  const sealedKey = box.seal(Buffer.alloc(32, 1).toString('base64'));
  db.transaction(() => keys.forEach((k, i) => repo.insert({
    name: `a${i}`, username: `u${i}`, password: box.seal(`password${i}`), status: 'enable', server_id: serverId, ip: ipNumber(i),
    allowed_ips_ipv6: null, b_download: 0, b_upload: 0, mangle: 1000 + i, private_key: sealedKey, public_key: k,
  })))();
  repo.forgetCached();
  return { app, db, iface, cookie, driver, run, repo };
}

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

const ipNumber = (i: number) => ((10 << 24) | (64 << 16)) + 2 + i;
const ip = (i: number) => { const v = ipNumber(i); return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`; };

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
  const { app, db, iface, cookie, driver, run, repo } = await setup(n, dir);
  let ok = true;
  let proxy: ResultPromise | null = null;
  try {
    const dumpMs: number[] = [];
    const dump = async () => {
      const t = performance.now();
      await run.run('wg', ['show', iface, 'dump']);
      dumpMs.push(performance.now() - t);
    };
    for (let r = 0; r < ROUNDS; r++) await dump();

    // (a) one sample: the worker reads the counters through the growth proxy, so every peer moved
    const proxyDir = join(dir, 'uapi');
    mkdirSync(proxyDir);
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
    const origin = await app.listen({ host: '127.0.0.1', port: 0 });
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

    // (c) GET /wireguard/online vs the bare dump
    const onlineMs: number[] = [];
    const floor: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let t = performance.now();
      const res = await request(`${origin}/api/v1/wireguard/online`, { headers: { cookie } });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET /wireguard/online: ${res.statusCode}`);
      onlineMs.push(performance.now() - t);
      t = performance.now();
      await run.run('wg', ['show', iface, 'dump']);
      floor.push(performance.now() - t);
    }
    const or = median(onlineMs) / median(floor);
    if (n >= 50_000 && or > TARGET_RATIO) ok = false;
    rows.c.push(`| ${n.toLocaleString('en-US')} | ${fmt(median(floor))} | ${fmt(median(onlineMs))} | ${or.toFixed(2)}x |`);
    process.stdout.write(`${n}: sample ${ratio.toFixed(2)}x dump; GET /account p99 ${pr.toFixed(2)}x; /wireguard/online ${or.toFixed(2)}x dump\n`);
    await sampler.close();
  } finally {
    proxy?.kill();
    await app.close();
    await run.run('ip', ['link', 'del', iface]).catch(() => undefined);
    db.close();
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
  process.stdout.write(`\n(c) GET /wireguard/online vs wg show dump, median of ${ROUNDS}\n`);
  process.stdout.write('| peers | wg show dump (ms) | GET /wireguard/online (ms) | ratio |\n|---|---|---|---|\n');
  process.stdout.write(`${rows.c.join('\n')}\n`);
  return ok ? 0 : 1;
}

process.exitCode = await (args.inner ? inner() : outer());
