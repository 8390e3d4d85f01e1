// `vpnhost platform store ...`: `migrate` copies a SQLite platform into PostgreSQL (the switch-over of docs/store.md);
// `status` prints the engine of a store and the migration versions it records.
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openPlatformDb, PLATFORM_DB_FILE } from './store/db.ts';
import { runMigrations } from './store/migrator.ts';
import { openQueryStore, PLATFORM_STORE_SCOPES, redactUrl, STORE_ENV, storeTarget } from './store/query/query-store.ts';
import { CopyMismatchError, copySqliteToPostgres, TargetNotEmptyError, type TableReport } from './store/transfer/sqlite-to-postgres.ts';
import { sql } from 'kysely';

const STORE_USAGE = `usage:
  vpnhost platform store migrate --from DIR --to postgres://USER[:PASSWORD]@HOST:PORT/DB
  vpnhost platform store status [--data DIR] [--store sqlite|postgres://...]

migrate: copies the platform database of DIR (upgraded to this release first) into an EMPTY PostgreSQL database in one
  transaction, then prints rows and a content digest per table read back from both sides; a difference rolls it all
  back (exit 1), a non-empty target is refused (exit 1). Stop every platform process of DIR first. --to defaults to
  ${STORE_ENV}. DIR keeps secret.key: every platform host needs that file.
status: the engine and the migration ledger (scope, version, name) of --store (default ${STORE_ENV}, else SQLite in --data).`;

/** The per-table lines `migrate` prints, and the total. */
function formatReports(reports: TableReport[]): string {
  const width = Math.max(5, ...reports.map((r) => r.table.length));
  const lines = [`${'table'.padEnd(width)}  ${'sqlite'.padStart(8)}  ${'postgres'.padStart(8)}  digest (sha-256, first 16)`];
  for (const r of reports) {
    const same = r.sourceRows === r.targetRows && r.sourceDigest === r.targetDigest;
    lines.push(`${r.table.padEnd(width)}  ${String(r.sourceRows).padStart(8)}  ${String(r.targetRows).padStart(8)}  `
      + `${r.sourceDigest.slice(0, 16)}${same ? '  same' : `  DIFFERS: postgres ${r.targetDigest.slice(0, 16)}`}`);
  }
  const rows = reports.reduce((n, r) => n + r.sourceRows, 0);
  lines.push(`${reports.length} tables, ${rows} rows`);
  return lines.join('\n');
}

/** Runs a `store` subcommand; resolves to the exit code (0 done, 1 refused or failed, 2 usage). */
export async function storeCommand(argv: string[], defaultDataDir: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { from: { type: 'string' }, to: { type: 'string' }, data: { type: 'string' }, store: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [action] = positionals;
  if (values.help || !action) {
    process.stdout.write(STORE_USAGE + '\n');
    return values.help ? 0 : 2;
  }
  if (action === 'migrate') {
    const to = values.to ?? process.env[STORE_ENV];
    if (!values.from || !to || storeTarget(to, values.from).engine !== 'postgres') {
      process.stderr.write(`vpnhost platform store migrate: needs --from DIR and --to postgres://...\n${STORE_USAGE}\n`);
      return 2;
    }
    if (!existsSync(join(values.from, PLATFORM_DB_FILE))) {
      process.stderr.write(`vpnhost platform store migrate: ${values.from} holds no ${PLATFORM_DB_FILE}\n`);
      return 1;
    }
    const source = openPlatformDb(values.from);
    try {
      for (const [scope, migrations] of PLATFORM_STORE_SCOPES) runMigrations(source, scope, migrations);
      const reports = await copySqliteToPostgres(source, to);
      process.stdout.write(`${formatReports(reports)}\ncopied ${values.from} into ${redactUrl(to)}\n`);
      return 0;
    } catch (error) {
      if (error instanceof CopyMismatchError) process.stdout.write(`${formatReports(error.reports)}\n`);
      if (error instanceof TargetNotEmptyError || error instanceof CopyMismatchError) {
        process.stderr.write(`vpnhost platform store migrate: ${error.message}\n`);
        return 1;
      }
      throw error;
    } finally {
      source.close();
    }
  }
  if (action === 'status') {
    const target = storeTarget(values.store, values.data ?? defaultDataDir);
    const store = await openQueryStore(target);
    try {
      const ledger = await sql<{ scope: string; version: number; name: string }>`SELECT scope, version, name FROM platform_migrations ORDER BY scope, version`.execute(store.db);
      process.stdout.write(`engine ${store.engine} ${target.engine === 'postgres' ? redactUrl(target.url) : target.dataDir}\n`);
      for (const row of ledger.rows) process.stdout.write(`${row.scope}\t${row.version}\t${row.name}\n`);
      return 0;
    } finally {
      await store.close();
    }
  }
  process.stderr.write(`vpnhost platform store: unknown action '${action}'\n${STORE_USAGE}\n`);
  return 2;
}
