// Bench (not a test): the panel's memory and GET /account at N accounts vs JSON.stringify of the same array.
//
// Run: `node --expose-gc --import tsx test/bench/panel-listings.ts [--accounts 50000] [--rounds 5]`. The store is
// filled by a child process (this script with `--fill DIR`: N accounts written through the repository, two sealed
// secrets each), so the bench's process starts as a panel that opened a full store: the app on the simulated twin
// (empty until the reconcile of the last part) listening on 127.0.0.1.
//   1. Memory (VmRSS of this process; with --expose-gc also V8's heap after a full collection) after the app is up,
//      after the first GET /account (every fragment made: every sealed secret opened), after `--rounds` more, and
//      after as many GET /wireguard/<name>/peers — each request made by `curl` (another process, body discarded), so
//      the figures are the panel's. Target: <= 300 MB at 50,000 accounts with the listings warm.
//   2. GET /account over HTTP on loopback (undici in this process reads each whole body), cold is the first of part 1,
//      warm the median of `--rounds` after three more to warm this client, next to JSON.stringify of the same array in
//      this process (target <= 3x); then a page, and GET /wireguard/<name>/peers.
//   3. GET /wireguard/online with every peer online in the twin, next to the twin's own dump read. Against a real
//      `wg show dump` with real handshakes (wireguard-go) see test/bench/panel-statistics.ts (c).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { request } from 'undici';
import { SecretBox } from '../../shared/secret-box.ts';
import { openDatabase } from '../../panel/store/db.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { median, fmt } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '5' },
    fill: { type: 'string' },
  },
  strict: true,
});
const N = Number(args.accounts);
const ROUNDS = Number(args.rounds);
const TARGET_RSS_MB = 300;
const SERVER = 'bench';

/** Peer `i`'s public key (deterministic, so the online part can address the same peers). */
const keyOf = (i: number): string => {
  const key = Buffer.alloc(32, 7);
  key.writeUInt32BE(i, 0);
  return key.toString('base64');
};

/** `--fill DIR`: the store of a panel in DIR with one server and N accounts (run in a child process). */
async function fill(dir: string): Promise<void> {
  const p = await makePanel({ licenseAccounts: N + 10, dir });
  try {
    await p.ok('POST', '/wireguard', { name: SERVER, address: '10.64.0.1/10' });
  } finally {
    await p.close();
  }
  const db = openDatabase(join(dir, 'panel.db'));
  const repo = new AccountsRepository(db);
  const box = SecretBox.open(dir);
  const serverId = (db.prepare('SELECT id FROM wireguard_servers').get() as { id: number }).id;
  const base = (10 << 24) | (64 << 16);
  db.transaction(() => {
    for (let i = 1; i <= N; i++) {
      repo.insert({
        name: `Account_${i}`, username: `User_${i}`, password: box.seal(`password${i}`), status: 'enable', server_id: serverId,
        ip: base + 1 + i, allowed_ips_ipv6: null, b_download: 0, b_upload: 0, mangle: 1000 + i,
        private_key: box.seal(Buffer.alloc(32, i % 251).toString('base64')), public_key: keyOf(i),
      });
    }
  })();
  db.close();
}

/** VmRSS of this process in MB, and V8's used heap after a full collection when `--expose-gc` is on. */
function memory(stage: string): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const { rss, heapUsed, heapTotal } = process.memoryUsage();
  const mb = (v: number) => v / 2 ** 20;
  console.log(`memory ${stage}: RSS ${fmt(mb(rss))} MB, heap ${fmt(mb(heapUsed))} of ${fmt(mb(heapTotal))} MB${gc ? ' (after gc)' : ''}`);
  return mb(rss);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-listings-'));
  let t = performance.now();
  await execa(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--fill', dir, '--accounts', String(N)], { stdio: 'inherit' });
  console.log(`fill (child process): ${N} accounts in ${fmt(performance.now() - t)} ms`);
  const now = new Date();
  const p = await makePanel({ dir, clock: { now: () => now } });
  try {
    const origin = await p.app.listen({ host: '127.0.0.1', port: 0 });
    const curl = async (url: string): Promise<number> => {
      const started = performance.now();
      const { stdout } = await execa('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--cookie', p.cookie, `${origin}/api/v1${url}`]);
      if (stdout !== '200') throw new Error(`${url}: ${stdout}`);
      return performance.now() - started;
    };
    memory('the app up on the full store');
    const cold = await curl('/account');
    memory('after the first GET /account');
    for (let r = 0; r < ROUNDS; r++) await curl('/account');
    memory(`after ${ROUNDS} more`);
    for (let r = 0; r < ROUNDS; r++) await curl(`/wireguard/${SERVER}/peers`);
    const warm = memory(`after ${ROUNDS} GET /wireguard/${SERVER}/peers (listings warm)`);
    console.log(`RSS with the listings warm: ${fmt(warm)} MB (target <= ${TARGET_RSS_MB} MB at 50,000)`);

    const get = async (url: string) => {
      const started = performance.now();
      const res = await request(`${origin}/api/v1${url}`, { headers: { cookie: p.cookie } });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
      return { ms: performance.now() - started, body };
    };
    for (let r = 0; r < 3; r++) await get('/account'); // this client's first reads of 16 MB warm it up
    const listing: number[] = [];
    for (let r = 0; r < ROUNDS; r++) listing.push((await get('/account')).ms);
    const array = JSON.parse((await get('/account')).body).msg;
    const floor: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      JSON.stringify({ error: '', msg: array, status: 'success' });
      floor.push(performance.now() - t);
    }
    const w = median(listing), f = median(floor);
    console.log(`GET /account (${N}): cold ${fmt(cold)} ms (curl), warm median ${fmt(w)} ms; JSON.stringify median ${fmt(f)} ms; ` +
      `ratio warm ${(w / f).toFixed(2)}x (target ≤ 3x)`);
    const peers: number[] = [];
    for (let r = 0; r < ROUNDS; r++) peers.push((await get(`/wireguard/${SERVER}/peers`)).ms);
    console.log(`GET /wireguard/${SERVER}/peers (${N}): median ${fmt(median(peers))} ms`);
    const page = await get('/account?limit=100&offset=25000');
    console.log(`GET /account?limit=100&offset=25000: ${fmt(page.ms)} ms`);

    // Every peer online in the twin (it holds the peers the repository wrote only after a reconcile).
    await p.app.services.dataplaneSync.reconcileAll();
    const at = Math.floor(now.getTime() / 1000);
    for (let i = 1; i <= N; i++) {
      p.driver.simulateHandshake('wg0', keyOf(i), { endpoint: `198.51.100.1:${1024 + (i % 60000)}`, at: at - (i % 100), rx: i, tx: 2 * i });
    }
    const online: number[] = [];
    let count = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const res = await get('/wireguard/online');
      online.push(res.ms);
      count = JSON.parse(res.body).msg.length;
    }
    const dump: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      await p.driver.inspect('wg0');
      dump.push(performance.now() - t);
    }
    console.log(`GET /wireguard/online (${count} online): median ${fmt(median(online))} ms; twin inspect median ${fmt(median(dump))} ms`);
  } finally {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await (args.fill ? fill(args.fill) : main());
