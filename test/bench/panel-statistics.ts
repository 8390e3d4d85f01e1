// Bench (not a test): one traffic-statistics sample (dump + deltas + SQLite write) at N peers vs a bare `wg show dump`.
//
// Run as root: `node --import tsx test/bench/panel-statistics.ts [--sizes 1000,10000,50000] [--rounds 5] [--quick]`
// (`--quick`: 1,000 and 10,000 only). The outer process makes a network namespace and re-runs itself inside it
// (`--inner`); a wireguard-go interface gets N peers (`wg addconf`), a temp SQLite file gets N accounts, and the
// sampler (panel/services/statistics) samples it through the LinuxDriver's `inspect` with every peer's counters
// grown between samples (so every sample writes N baselines and N day rows). Target: ≤ 2x the dump at 50,000.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { LinuxDriver } from '../../panel/dataplane/linux/linux-driver.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { TrafficSampler } from '../../panel/services/statistics/sampler.ts';
import { manualClock } from '../../panel/shared/clock.ts';
import { openDatabase } from '../../panel/store/db.ts';
import { TrafficStatisticsRepository } from '../../panel/store/repositories/traffic-statistics.ts';
import { createNamespace, destroyNamespace, uniqueWgName } from '../helpers/netns.ts';
import { ROOT } from '../helpers/panel-process.ts';
import { hasTool, isRoot } from '../helpers/require-tools.ts';

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
const USERSPACE_ENV = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1', LOG_LEVEL: '' };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n: number) => n.toFixed(1);

async function outer(): Promise<number> {
  const missing = ['wg', 'wireguard-go', 'ip'].filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) {
    process.stderr.write(`bench needs: ${missing.join(', ')}\n`);
    return 2;
  }
  const ns = await createNamespace('vhbs');
  try {
    const child: ResultPromise = execa('ip', ['netns', 'exec', ns, process.execPath, '--import', 'tsx', new URL(import.meta.url).pathname,
      '--inner', '--sizes', SIZES.join(','), '--rounds', String(ROUNDS)], { cwd: ROOT, stdio: 'inherit', reject: false, timeout: 60 * 60_000 });
    return (await child).exitCode ?? 1;
  } finally {
    await destroyNamespace(ns);
  }
}

/** An interface with `n` peers and a database with `n` accounts of one server on it. */
async function setup(n: number, dir: string) {
  const iface = uniqueWgName();
  // `wg addconf` of 50,000 peers into wireguard-go takes minutes: past the runner's default 30 s.
  const run = new ExecaRunner({ timeoutMs: 20 * 60_000 });
  await run.run('wireguard-go', [iface], { env: USERSPACE_ENV, detached: true });
  const keys = Array.from({ length: n }, () => generateKeyPair().publicKey);
  const conf = keys.map((k, i) => `[Peer]\nPublicKey = ${k}\nAllowedIPs = 10.${80 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}/32\n`).join('');
  const file = join(dir, `${iface}.conf`);
  writeFileSync(file, `[Interface]\nListenPort = ${40000 + n % 20000}\n${conf}`, { mode: 0o600 });
  await run.run('wg', ['addconf', iface, file]);
  await run.run('ip', ['link', 'set', iface, 'up']);
  const db = openDatabase(join(dir, `panel-${n}.db`));
  db.prepare(`INSERT INTO wireguard_servers (id, name, interface_name, listen_port, address, net_first, net_last, external_ip,
    dns_1, dns_2, allowed_ips, private_key, public_key) VALUES (1, 'b', ?, 51820, '10.80.0.1/12', 0, 0, '', '', '', '', '', 'x')`).run(iface);
  const insert = db.prepare(`INSERT INTO accounts (name, username, password, status, server_id, ip, mangle, private_key, public_key)
    VALUES (?, ?, '', 'enable', 1, ?, ?, '', ?)`);
  db.transaction(() => keys.forEach((k, i) => insert.run(`a${i}`, `u${i}`, i + 1, i + 1, k)))();
  return { iface, db, run };
}

async function inner(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-stats-'));
  const runner = new ExecaRunner();
  const driver = new LinuxDriver({ runner, stateDir: join(dir, 'state'), wireguard: 'userspace' });
  const rows: string[] = [];
  let failed = false;
  try {
    for (const n of SIZES) {
      const { iface, db, run } = await setup(n, dir);
      try {
        const dumpMs: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const t0 = performance.now();
          await run.run('wg', ['show', iface, 'dump']);
          dumpMs.push(performance.now() - t0);
        }
        // Counters grow by 1,000/2,000 bytes per peer and sample, so every sample writes every baseline and row.
        let grow = 0;
        const wireguard = {
          inspect: async (name: string) => {
            const state = await driver.inspect(name);
            grow++;
            return state && { ...state, peers: state.peers.map((p) => ({ ...p, transferRx: p.transferRx + grow * 1000, transferTx: p.transferTx + grow * 2000 })) };
          },
        };
        const clock = manualClock(new Date('2026-03-15T12:00:00Z'));
        const sampler = new TrafficSampler({ repo: new TrafficStatisticsRepository(db), wireguard, clock, timeZone: 'UTC' });
        await sampler.sample(); // first sighting: baselines
        const sampleMs: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          clock.advance(300_000);
          const result = await sampler.sample();
          if (result.peers !== n) throw new Error(`sample saw ${result.peers} of ${n} peers`);
          sampleMs.push(result.durationMs);
        }
        const ratio = median(sampleMs) / median(dumpMs);
        const verdict = n >= 50_000 ? (ratio <= TARGET_RATIO ? 'ok' : 'ABOVE TARGET') : '';
        if (verdict === 'ABOVE TARGET') failed = true;
        rows.push(`| ${n.toLocaleString('en-US')} | ${fmt(median(dumpMs))} | ${fmt(median(sampleMs))} | ${ratio.toFixed(2)}x | ${verdict} |`);
        process.stdout.write(`${n} peers: dump ${fmt(median(dumpMs))} ms, sample ${fmt(median(sampleMs))} ms (${ratio.toFixed(2)}x)\n`);
      } finally {
        db.close();
        await run.run('ip', ['link', 'del', iface]).catch(() => undefined);
      }
    }
    process.stdout.write(`\nmedian of ${ROUNDS}; target at 50,000: sample ≤ ${TARGET_RATIO}x dump\n`);
    process.stdout.write('| peers | wg show dump (ms) | one sample (ms) | ratio | target |\n|---|---|---|---|---|\n');
    process.stdout.write(`${rows.join('\n')}\n`);
    return failed ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await (args.inner ? inner() : outer());
