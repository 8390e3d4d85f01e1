// Bench (not a test): GET /account at N accounts vs JSON.stringify of the same array, GET /wireguard/online at N peers.
//
// Run: `node --import tsx test/bench/panel-listings.ts [--accounts 50000] [--rounds 5]`. In process, over real HTTP on
// loopback (the app listens on 127.0.0.1; undici reads each whole body — inject() would add light-my-request's own
// copying of a 15 MB payload),
// on a temp SQLite file and the simulated WireGuard twin (accounts are written straight through the repository, so
// the fill takes seconds). Prints the first (cold: every secret opened) and the median warm listing next to
// JSON.stringify of the same array, the ratio (target ≤ 3x), and GET /wireguard/online with every peer online next
// to the twin's own dump read (`inspect`). GET /wireguard/online against a real `wg show <iface> dump` (wireguard-go,
// the LinuxDriver) is part (c) of test/bench/panel-statistics.ts.
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import { SecretBox } from '../../panel/shared/secret-box.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { median, fmt } from './bench-math.ts';

const { values: args } = parseArgs({
  options: { accounts: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '5' } },
  strict: true,
});
const N = Number(args.accounts);
const ROUNDS = Number(args.rounds);

async function main(): Promise<void> {
  const now = new Date();
  const p = await makePanel({ licenseAccounts: N + 10, clock: () => now });
  try {
    await p.ok('POST', '/wireguard', { name: 'bench', address: '10.64.0.1/10' });
    const repo = new AccountsRepository(p.db);
    const box = SecretBox.open(p.dir);
    const serverId = (p.db.prepare('SELECT id FROM wireguard_servers').get() as { id: number }).id;
    const base = (10 << 24) | (64 << 16);
    const keys: string[] = [];
    let t = performance.now();
    p.db.transaction(() => {
      for (let i = 1; i <= N; i++) {
        const key = Buffer.alloc(32, 7);
        key.writeUInt32BE(i, 0);
        keys.push(key.toString('base64'));
        repo.insert({
          name: `Account_${i}`, username: `User_${i}`, password: box.seal(`password${i}`), status: 'enable', server_id: serverId,
          ip: base + 1 + i, allowed_ips_ipv6: null, b_download: 0, b_upload: 0, mangle: 1000 + i,
          private_key: box.seal(Buffer.alloc(32, i % 251).toString('base64')), public_key: keys[i - 1],
        });
      }
    })();
    console.log(`fill: ${N} accounts in ${fmt(performance.now() - t)} ms`);

    const origin = await p.app.listen({ host: '127.0.0.1', port: 0 });
    const get = async (url: string) => {
      const started = performance.now();
      const res = await request(`${origin}/api/v1${url}`, { headers: { cookie: p.cookie } });
      const body = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
      return { ms: performance.now() - started, body };
    };
    const cold = await get('/account');
    const warm: number[] = [];
    for (let r = 0; r < ROUNDS; r++) warm.push((await get('/account')).ms);
    const array = JSON.parse(cold.body).msg;
    const floor: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      JSON.stringify({ error: '', msg: array, status: 'success' });
      floor.push(performance.now() - t);
    }
    const w = median(warm), f = median(floor);
    console.log(`GET /account (${N}): cold ${fmt(cold.ms)} ms, warm median ${fmt(w)} ms; JSON.stringify median ${fmt(f)} ms; ` +
      `ratio warm ${(w / f).toFixed(2)}x, cold ${(cold.ms / f).toFixed(2)}x (target ≤ 3x)`);
    const page = await get('/account?limit=100&offset=25000');
    console.log(`GET /account?limit=100&offset=25000: ${fmt(page.ms)} ms`);

    // Every peer online in the twin (it holds the peers the repository wrote only after a reconcile).
    await p.app.services.dataplaneSync.reconcileAll();
    const at = Math.floor(now.getTime() / 1000);
    keys.forEach((key, i) => p.driver.simulateHandshake('wg0', key, { endpoint: `198.51.100.1:${1024 + (i % 60000)}`, at: at - (i % 100), rx: i, tx: 2 * i }));
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
  }
}

await main();
