// Bench (not a test): POST /account latency against a raw `wg set` floor, and GET /account/<name> against bare Fastify.
//
// Run as root: `node --import tsx test/bench/panel-accounts.ts [--sizes 100,1000,10000] [--samples 50]`.
// The outer process makes a network namespace and re-runs itself inside it (`--inner`), so the panel, its
// wireguard-go daemon, the raw `wg set` floor and the HTTP client all live in that namespace and talk over its
// loopback; the default namespace is never touched. Everything is removed at the end.
import { execa, type ResultPromise } from 'execa';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { renderWgSetArgs } from '../../panel/dataplane/render/wg-set-args.ts';
import { createNamespace, destroyNamespace, uniqueWgName } from '../helpers/netns.ts';
import { PanelProcess, ROOT } from '../helpers/panel-process.ts';
import { hasTool, isRoot } from '../helpers/require-tools.ts';
import { median, fmt as fmtDigits } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    inner: { type: 'boolean' },
    sizes: { type: 'string', default: '100,1000,10000' },
    samples: { type: 'string', default: '50' },
    'get-requests': { type: 'string', default: '10000' },
    connections: { type: 'string', default: '8' },
  },
  strict: true,
});
const SIZES = args.sizes!.split(',').map(Number);
const SAMPLES = Number(args.samples);
const GET_REQUESTS = Number(args['get-requests']);
const CONNECTIONS = Number(args.connections);
const FILL_CONCURRENCY = 16;
const GET_ROUNDS = 3;
const TARGET_POST_RATIO = 3;
const TARGET_SIZE_RATIO = 1.3;
const TARGET_GET_SHARE = 50;

/** A bare Fastify app answering the same JSON on the same path, in its own process like the panel. */
const BARE_FASTIFY_JS = `
import Fastify from 'fastify';
const body = JSON.parse(process.env.BENCH_BODY);
const app = Fastify({ logger: false });
app.get('/api/v1/account/:name', async () => body);
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write('bare listening on http://127.0.0.1:' + app.server.address().port + '\\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
`;

const ms = (ns: bigint) => Number(ns) / 1e6;
const int = (n: number) => Math.round(n).toLocaleString('en-US');
/** Host `i` (1-based) of a /16 starting at `base` (`10.80`), skipping .0 and .255 of each /24. */
const hostIp = (base: string, i: number) => `${base}.${Math.floor((i - 1) / 254)}.${((i - 1) % 254) + 1}`;

const fmt = (n: number, digits = 2) => fmtDigits(n, digits);

async function outer(): Promise<number> {
  const missing = ['wg', 'wireguard-go', 'ip'].filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) {
    process.stderr.write(`bench needs: ${missing.join(', ')}\n`);
    return 2;
  }
  const ns = await createNamespace('vhbn');
  let child: ResultPromise | null = null;
  const stop = () => child?.kill('SIGTERM');
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    child = execa('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', new URL(import.meta.url).pathname, '--inner',
      '--sizes', args.sizes!, '--samples', args.samples!, '--get-requests', args['get-requests']!, '--connections', args.connections!],
    { cwd: ROOT, stdio: 'inherit', reject: false, timeout: 60 * 60_000 });
    const result = await child;
    return result.exitCode ?? 1;
  } finally {
    await destroyNamespace(ns);
  }
}

/** Accounts made so far, the next address to hand out, the name of the last sampled account. */
interface Fill {
  n: number;
  nextIp: number;
  lastName: string;
}

/** POSTs accounts until the panel holds `target`, `FILL_CONCURRENCY` requests at a time. */
async function fill(panel: PanelProcess, server: string, have: Fill, target: number): Promise<void> {
  const worker = async () => {
    while (have.n < target) {
      have.n++;
      await panel.client.ok('POST', '/account', { wg_name: server, allowed_IPs: hostIp('10.80', have.nextIp++) });
    }
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
}

interface SizeResult {
  size: number;
  post: number;
  wgSet: number;
}

/** Median POST /account and raw `wg set` at the current size, interleaved so both see the same machine. */
async function sample(panel: PanelProcess, server: string, iface: string, have: Fill, size: number): Promise<SizeResult> {
  const runner = new ExecaRunner();
  const post: number[] = [];
  const wgSet: number[] = [];
  const rawKeys: string[] = [];
  const timePost = async () => {
    const t0 = process.hrtime.bigint();
    const created = await panel.client.ok<{ name: string }>('POST', '/account', { wg_name: server, allowed_IPs: hostIp('10.80', have.nextIp++) });
    have.lastName = created.name;
    post.push(ms(process.hrtime.bigint() - t0));
    have.n++;
  };
  const timeWgSet = async (i: number) => {
    const key = generateKeyPair().publicKey;
    rawKeys.push(key);
    // The very argv the driver renders for one new peer, spawned through the driver's own runner.
    const [argv] = renderWgSetArgs(iface, { upsert: [{ publicKey: key, allowedIps: [`${hostIp('10.81', i)}/32`], persistentKeepalive: 0 }], remove: [] });
    const t0 = process.hrtime.bigint();
    await runner.run('wg', argv);
    wgSet.push(ms(process.hrtime.bigint() - t0));
  };
  for (let i = 1; i <= SAMPLES; i++) {
    if (i % 2) {
      await timePost();
      await timeWgSet(i);
    } else {
      await timeWgSet(i);
      await timePost();
    }
  }
  for (const argv of renderWgSetArgs(iface, { upsert: [], remove: rawKeys })) await runner.run('wg', argv);
  return { size, post: median(post), wgSet: median(wgSet) };
}

/** `total` GETs of `path` over `connections` keep-alive connections; answers requests per second. */
async function load(origin: string, path: string, headers: Record<string, string>, total: number, connections: number, expect: string): Promise<number> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let issued = 0;
  let bad = 0;
  const worker = async () => {
    while (issued < total) {
      issued++;
      const res = await pool.request({ method: 'GET', path, headers });
      const text = await res.body.text();
      if (res.statusCode !== 200 || text.length !== expect.length) bad++;
    }
  };
  const t0 = process.hrtime.bigint();
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await pool.close();
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (bad) throw new Error(`${bad} of ${total} answers to ${origin}${path} were not the expected JSON`);
  return total / seconds;
}

async function startBare(body: string): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = execa(process.execPath, ['--input-type=module', '-e', BARE_FASTIFY_JS], { cwd: ROOT, env: { BENCH_BODY: body }, reject: false, buffer: false, stdin: 'ignore' });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`bare Fastify did not start: ${out}`)), 30_000);
    proc.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /bare listening on (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    proc.stderr?.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    void proc.then(() => { clearTimeout(timer); reject(new Error(`bare Fastify exited: ${out}`)); });
  });
  return { url, stop: async () => { proc.kill('SIGTERM'); await proc; } };
}

async function inner(): Promise<number> {
  const maxAccounts = Math.max(...SIZES) + SIZES.length * SAMPLES + 100;
  const panel = await PanelProcess.start({ driver: 'linux', wireguard: 'userspace', licenseAccounts: Math.max(20_000, maxAccounts), connections: FILL_CONCURRENCY });
  let bare: { url: string; stop(): Promise<void> } | null = null;
  try {
    const iface = uniqueWgName();
    await panel.client.ok('POST', '/wireguard', { name: 'bench', interface_name: iface, listen_port: 51820, address: '10.80.255.254/16', external_ip: '192.0.2.1' });
    const have: Fill = { n: 0, nextIp: 1, lastName: '' };
    // Warm-up (JIT, prepared statements, page cache), then removed again.
    const warm = await panel.client.ok<{ name: string }>('POST', '/account', { wg_name: 'bench', allowed_IPs: '10.80.255.253' });
    await panel.client.ok('DELETE', `/account/${warm.name}`);

    const results: SizeResult[] = [];
    for (const size of SIZES) {
      const t0 = Date.now();
      await fill(panel, 'bench', have, size);
      process.stderr.write(`filled to ${int(have.n)} accounts in ${fmt((Date.now() - t0) / 1000, 1)} s; sampling ${SAMPLES} POSTs and wg sets\n`);
      results.push(await sample(panel, 'bench', iface, have, size));
    }

    const name = have.lastName;
    const answer = await panel.client.request('GET', `/account/${name}`);
    if (answer.body.status !== 'success') throw new Error(`GET /account/${name}: ${answer.body.error}`);
    const body = JSON.stringify(answer.body);
    bare = await startBare(body);
    const panelHeaders = { cookie: `access_hash=${panel.accessHash}` };
    const path = `/api/v1/account/${name}`;
    await load(bare.url, path, {}, 2000, CONNECTIONS, body);
    await load(panel.url, path, panelHeaders, 2000, CONNECTIONS, body);
    const bareRates: number[] = [];
    const panelRates: number[] = [];
    for (let round = 0; round < GET_ROUNDS; round++) {
      bareRates.push(await load(bare.url, path, {}, GET_REQUESTS, CONNECTIONS, body));
      panelRates.push(await load(panel.url, path, panelHeaders, GET_REQUESTS, CONNECTIONS, body));
    }
    // Diagnostic: the same panel with request logging off (level warn), to show what the two log lines cost.
    await panel.restart({ env: { VPNHOST_LOG_LEVEL: 'warn' } });
    await bootReconciled(panel);
    await load(panel.url, path, panelHeaders, 2000, CONNECTIONS, body);
    const quietRates: number[] = [];
    for (let round = 0; round < GET_ROUNDS; round++) {
      bareRates.push(await load(bare.url, path, {}, GET_REQUESTS, CONNECTIONS, body));
      quietRates.push(await load(panel.url, path, panelHeaders, GET_REQUESTS, CONNECTIONS, body));
    }
    report(results, { panel: median(panelRates), quiet: median(quietRates), bare: median(bareRates) }, have.n);
    return 0;
  } catch (err) {
    process.stderr.write(`bench failed: ${(err as Error).stack}\npanel output (tail):\n${panel.output().slice(-4000)}\n`);
    return 1;
  } finally {
    await bare?.stop();
    await panel.cleanup();
  }
}

/** Waits (bounded) until the boot reconcile of a restarted panel is over. */
async function bootReconciled(panel: PanelProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await panel.client.ok<{ status: string }>('GET', '/system/status')).status === 'OK') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('boot reconcile did not finish');
}

function report(rows: SizeResult[], rates: { panel: number; quiet: number; bare: number }, accounts: number): void {
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(10) : c.padStart(14))).join('');
  const out: string[] = [];
  out.push('', `POST /account over keep-alive HTTP vs one raw \`wg set <if> peer <key> allowed-ips <ip>/32\` (median of ${SAMPLES} each)`);
  out.push(line(['accounts', 'POST ms', 'wg set ms', 'POST/wg set']));
  for (const r of rows) out.push(line([int(r.size), fmt(r.post), fmt(r.wgSet), `${fmt(r.post / r.wgSet)}x`]));
  const first = rows[0];
  const last = rows[rows.length - 1];
  const postRatio = last.post / last.wgSet;
  const sizeRatio = last.post / first.post;
  const share = (rates.panel / rates.bare) * 100;
  const verdict = (okay: boolean) => (okay ? 'ok' : 'MISSED');
  out.push('');
  out.push(`POST/wg set at ${int(last.size)}: ${fmt(postRatio)}x (target <= ${TARGET_POST_RATIO}x) ${verdict(postRatio <= TARGET_POST_RATIO)}`);
  out.push(`POST at ${int(last.size)} vs ${int(first.size)}: ${fmt(sizeRatio)}x (target <= ${TARGET_SIZE_RATIO}x) ${verdict(sizeRatio <= TARGET_SIZE_RATIO)}`);
  out.push('');
  out.push(`GET /account/<name> with ${int(accounts)} accounts, ${CONNECTIONS} connections, median of rounds of ${int(GET_REQUESTS)} requests`);
  const row = (label: string, rate: string, share: string) => out.push(`${label.padEnd(28)}${rate.padStart(10)}${share.padStart(10)}`);
  row('server', 'req/s', 'of bare');
  const rateRow = (label: string, rate: number) => row(label, int(rate), `${fmt((rate / rates.bare) * 100, 1)}%`);
  rateRow('bare Fastify', rates.bare);
  rateRow('panel (default: info logs)', rates.panel);
  rateRow('panel (warn: no request logs)', rates.quiet);
  out.push(`panel/bare: ${fmt(share, 1)}% (target >= ${TARGET_GET_SHARE}%) ${verdict(share >= TARGET_GET_SHARE)}`, '');
  process.stdout.write(out.join('\n'));
}

process.exitCode = args.inner ? await inner() : await outer();
