// `vpnhost platform store migrate` on a data directory made by today's release (test/fixtures/platform/release-2026-11):
// every table copied with equal rows and digests printed, the target refused once it holds data, and the copy read back
// through the query layer answers what the SQLite store answers.
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { execa } from 'execa';
import { sql } from 'kysely';
import Database from 'better-sqlite3';
import { PLATFORM_DB_FILE } from '../../../module/platform/store/db.ts';
import { openQueryStore, type QueryStore } from '../../../module/platform/store/query/query-store.ts';
import { AdminTokenQueries } from '../../../module/platform/store/query/repositories/admin-tokens.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { PriceQueries } from '../../../module/platform/store/query/repositories/prices.ts';
import { ProductQueries } from '../../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../../module/platform/store/query/repositories/services.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { removeDir, ROOT, tempDir } from '../../fixtures/platform/processes.ts';
import { runCli } from '../../helpers/cli-in-process.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../../helpers/postgres-server.ts';

const FIXTURE = new URL('../../fixtures/platform/release-2026-11/', import.meta.url).pathname;
const BIN = new URL('../../../bin/vpnhost.js', import.meta.url).pathname;

let server: PostgresServer | null = null;
let dataDir = '';

before(() => {
  dataDir = tempDir('store-migrate');
  cpSync(FIXTURE, dataDir, { recursive: true });
});

after(async () => {
  await server?.stop();
  removeDir(dataDir);
});

/** `vpnhost platform store ...` run in this process (the binary's start is tested below, with serve). */
async function run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const res = await runCli(['platform', 'store', ...args]);
  return { exitCode: res.code, stdout: res.stdout.replace(/\n$/, ''), stderr: res.stderr.replace(/\n$/, '') };
}

/** Row counts of a platform database, read straight from its file (a store opened on it would migrate it first). */
function rowCounts(dir: string): Map<string, number> {
  const db = new Database(`${dir}/${PLATFORM_DB_FILE}`, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>;
    return new Map(tables.map(({ name }) => [name, (db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

test('store migrate copies the release fixture into PostgreSQL, refuses a non-empty target, and both stores answer alike', async (t) => {
  if (!requirePostgres(t)) return;
  server = await startPostgres();
  const usage = await run(['migrate', '--from', dataDir]);
  assert.equal(usage.exitCode, 2, 'no --to and no VPNHOST_PLATFORM_STORE');
  const nowhere = await run(['migrate', '--from', `${dataDir}/missing`, '--to', server.url]);
  assert.equal(nowhere.exitCode, 1);
  assert.match(nowhere.stderr, /missing holds no platform\.db/);
  assert.equal(existsSync(`${dataDir}/missing`), false, 'no empty platform made on the way');

  const copied = await run(['migrate', '--from', dataDir, '--to', server.url]);
  assert.equal(copied.exitCode, 0, copied.stderr);
  const lines = new Map(copied.stdout.split('\n').map((line) => line.trim().split(/\s+/)).filter((f) => f.length === 5).map((f) => [f[0], f]));
  // The source as migrate left it: upgraded in place to this release first (a later step may add rows, e.g. its ledger's).
  const counts = rowCounts(dataDir);
  const fixture = rowCounts(FIXTURE);
  for (const [table, rows] of fixture) if (table !== 'platform_migrations') assert.ok(counts.get(table)! >= rows, `${table} kept its rows`);
  for (const [table, rows] of counts) {
    const line = lines.get(table);
    assert.ok(line, `${table} is reported`);
    assert.deepEqual([line[1], line[2], line[4]], [String(rows), String(rows), 'same'], table);
    assert.match(line[3], /^[0-9a-f]{16}$/);
  }
  assert.ok(counts.get('services')! > 0 && counts.get('invoices')! > 0 && counts.get('tasks')! > 0, 'the fixture holds data');
  assert.match(copied.stdout, new RegExp(`${counts.size} tables, ${[...counts.values()].reduce((a, b) => a + b, 0)} rows`));

  const again = await run(['migrate', '--from', dataDir, '--to', server.url]);
  assert.equal(again.exitCode, 1);
  assert.match(again.stderr, /is not empty \(\d+ tables: .*\); store migrate copies into an empty database only/);

  const status = await run(['status', '--store', server.url]);
  assert.equal(status.exitCode, 0, status.stderr);
  const local = await run(['status', '--data', dataDir]);
  assert.equal(status.stdout.split('\n').slice(1).join('\n'), local.stdout.split('\n').slice(1).join('\n'), 'the same migration ledger');
  assert.match(status.stdout, /^engine postgres postgres:\/\/vpnhost@/);

  const sqlite = await openQueryStore({ engine: 'sqlite', dataDir });
  const postgres = await openQueryStore({ engine: 'postgres', url: server.url });
  try {
    const both = async <T>(read: (store: QueryStore) => Promise<T>): Promise<T> => {
      const [a, b] = [await read(sqlite), await read(postgres)];
      assert.deepEqual(b, a);
      return a;
    };
    assert.equal((await both((s) => new ProductQueries(s).list())).length, 2);
    assert.equal((await both((s) => new CustomerQueries(s).list())).length, 4);
    const ana = await both((s) => new CustomerQueries(s).findByEmail('ana.lopez@example.TEST'));
    assert.equal(ana?.name, 'Ana López');
    await both(async (s) => Promise.all((await new CustomerQueries(s).list()).map((c) => new CustomerQueries(s).serviceUuids(c.uuid))));
    assert.equal((await both((s) => new PriceQueries(s).list())).length, 3);
    await both((s) => new AdminTokenQueries(s).list());
    // Sealed secrets open with the data directory's key on both sides; the admin list's pages answer alike.
    const box = SecretBox.open(dataDir);
    const services = await both((s) => new ServiceQueries(s, box).list());
    assert.equal(services.length, 4);
    assert.ok(services.some((svc) => svc.service_data.password === 'Rel3asePassw0rd'));
    await both((s) => new ServiceQueries(s, box).page({ page: 1, per_page: 3 }));
    await both((s) => new ServiceQueries(s, box).page({ page: 2, per_page: 3, location: 'ams' }));
    await both((s) => new ServiceQueries(s, box).countByStatus());
    const invoices = sql<{ number: string; status: string; amount_minor: number }>`SELECT number, status, amount_minor FROM invoices ORDER BY id`;
    const rows = await both(async (s) => (await invoices.execute(s.db)).rows);
    assert.deepEqual(rows.map((r) => r.status).sort(), ['paid', 'paid', 'refunded', 'unpaid']);
    // Identity columns continue after the copied ids.
    const [a, b] = [await new AdminTokenQueries(sqlite).create('next'), await new AdminTokenQueries(postgres).create('next')];
    assert.equal(b.id, a.id);
  } finally {
    await sqlite.close();
    await postgres.close();
  }
});

test('serve on an unreachable PostgreSQL store fails at start without its password and without touching the data directory; a bad --store is refused', async () => {
  const dir = `${tempDir('store-refuse')}/never-made`;
  const res = await execa(process.execPath, [BIN, 'platform', 'serve', '--listen', '127.0.0.1:0', '--store', 'postgres://u:secret@127.0.0.1:1/db', '--data', dir], { cwd: ROOT, reject: false, timeout: 60_000 });
  assert.equal(res.exitCode, 1, res.stderr);
  assert.match(res.stderr, /ECONNREFUSED/);
  assert.doesNotMatch(res.stdout + res.stderr, /secret/);
  assert.equal(existsSync(dir), false, 'nothing is written before the store opens');
  const bad = await execa(process.execPath, [BIN, 'platform', 'serve', '--data', dir], { cwd: ROOT, reject: false, env: { VPNHOST_PLATFORM_STORE: 'mysql://x' } });
  assert.equal(bad.exitCode, 1);
  assert.match(bad.stderr, /--store: expected sqlite or postgres:\/\/USER@HOST:PORT\/DB, got "mysql:\/\/x"/);
  assert.equal(existsSync(dir), false);
  removeDir(dirname(dir));
});
