// Bench (not a test): what the row checks of PUT /backups/restore cost at N accounts, next to the table copy itself.
//
// Run: `node --import tsx test/bench/panel-restore.ts [--sizes 1000,10000,50000] [--rounds 3]`. In process, on a temp
// SQLite file and the simulated twin. Per size: N accounts with real key pairs (private keys sealed, as the API stores
// them) written straight through the repository on one /10 server, one archive (POST /backups); then, on the
// extracted and prepared snapshot, the median of `checkSnapshotRows` (every row through the API's checks: X25519
// derivation, two secrets opened and six indexed lookups per account) next to the median of `applySnapshot` (the
// one-transaction copy of every table, what a restore always did: the floor), their ratio, and one whole
// `PUT /backups/restore` (verification, checks, swap, reconcile of the twin) for scale, with the longest event-loop
// stall during it (the checks yield every 100 rows; the one-transaction table copy does not).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DEFAULT_LIMITS } from '../../panel/services/backups/archive-format.ts';
import { extractArchive, extractedPath } from '../../panel/services/backups/archive-reader.ts';
import { checkSnapshotRows } from '../../panel/services/backups/snapshot-checks.ts';
import { applySnapshot, prepareSnapshot } from '../../panel/services/backups/store-restore.ts';
import { HostNetworkReader } from '../../panel/services/host-networks.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { fmt, median } from './bench-math.ts';
import { fillAccounts } from './fill-accounts.ts';

const { values: args } = parseArgs({
  options: { sizes: { type: 'string', default: '1000,10000,50000' }, rounds: { type: 'string', default: '3' } },
  strict: true,
});
const SIZES = args.sizes.split(',').map(Number);
const ROUNDS = Number(args.rounds);

async function timed(fn: () => unknown): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function measure(n: number): Promise<void> {
  const p = await makePanel({ licenseAccounts: n + 10 });
  const work = mkdtempSync(join(tmpdir(), 'vpnhost-bench-restore-'));
  try {
    await p.ok('POST', '/wireguard', { name: 'bench', address: '10.64.0.1/10' });
    const fill = await timed(() => {
      fillAccounts(p, 'bench', n, { firstOctets: [10, 64], keyByte: 7, keyPairs: true });
      p.db.prepare("UPDATE wireguard_counters SET value = ? WHERE name = 'account_seq'").run(1000 + n);
    });
    const box = SecretBox.open(p.dir);
    const made = await p.ok('POST', '/backups', {});
    const archive = await extractArchive(join(p.dir, 'backups', made.backup_name), join(work, 'x'), DEFAULT_LIMITS);
    const snapshot = extractedPath(archive, 'panel.db');
    prepareSnapshot(snapshot, archive.list.schema_versions);
    const host = await new HostNetworkReader(p.driver).fresh(['wg0']);
    const context = { box, host, apiPort: null, accountLimit: () => n + 10 };
    const checks: number[] = [];
    const copies: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      checks.push(await timed(() => checkSnapshotRows(snapshot, context)));
      copies.push(await timed(() => applySnapshot(p.db, snapshot)));
    }
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const restore = await timed(() => p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }));
    loop.disable();
    const c = median(checks), f = median(copies);
    console.log(`${n} accounts (fill ${fmt(fill / 1000)} s): row checks median ${fmt(c)} ms (${fmt((c * 1000) / n, 2)} µs/account), ` +
      `table copy median ${fmt(f)} ms, ratio ${(c / f).toFixed(2)}x; whole PUT /backups/restore ${fmt(restore)} ms ` +
      `(checks ${((c / restore) * 100).toFixed(0)} % of it), longest event-loop stall during it ${fmt(loop.max / 1e6)} ms`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await p.close();
  }
}

for (const n of SIZES) await measure(n);
