// `store migrate`: copies a platform's SQLite database into an empty PostgreSQL database in one PostgreSQL transaction —
// schema from the same migration history (at the versions the source records), every row, identity sequences moved on,
// then a row count and content digest per table computed on both sides; any difference rolls everything back.
import { systemClock, type Clock } from '../../../../shared/clock.ts';
import type { Db } from '../db.ts';
import { appliedMigrations } from '../migrator.ts';
import { createPgPool, redactUrl } from '../query/query-store.ts';
import { quoteIdent } from '../sql/pg-ddl.ts';
import { inPgTransaction, insertRows, migrateInTransaction, MIGRATION_LOCK_KEY, syncIdentities } from '../sql/pg-migrator.ts';
import { readSqliteSchema } from '../sql/schema-model.ts';
import { TableDigest } from './table-digest.ts';
import { scopesOfLedger } from './scopes-of.ts';

/** Rows and digest of one table on both sides. */
export interface TableReport {
  table: string;
  sourceRows: number;
  targetRows: number;
  sourceDigest: string;
  targetDigest: string;
}

/** The target already holds tables: nothing was written. */
export class TargetNotEmptyError extends Error {}

/** The copy read back differs from the source: everything was rolled back. */
export class CopyMismatchError extends Error {
  constructor(readonly reports: TableReport[]) {
    const bad = reports.filter((r) => r.sourceRows !== r.targetRows || r.sourceDigest !== r.targetDigest).map((r) => r.table);
    super(`the copy differs from the source in ${bad.join(', ')}; nothing was committed`);
  }
}

const BATCH = 500;

/**
 * Copies every table of `source` (an open, migrated platform database) into the empty PostgreSQL database at `url`.
 * Stop the platform processes first: rows written to the source after the copy began are not carried over.
 */
export async function copySqliteToPostgres(source: Db, url: string, clock: Clock = systemClock): Promise<TableReport[]> {
  const ledger = new Map<string, Set<number>>();
  for (const row of appliedMigrations(source)) {
    if (!ledger.has(row.scope)) ledger.set(row.scope, new Set());
    ledger.get(row.scope)!.add(row.version);
  }
  const scopes = await scopesOfLedger(ledger);
  const tables = [...readSqliteSchema(source).tables.map((t) => t.name), 'platform_migrations'];
  const pool = createPgPool(url, 1);
  try {
    return await inPgTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      const present = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name");
      if (present.rows.length > 0) {
        const names = present.rows.map((r) => r.table_name);
        throw new TargetNotEmptyError(`the target database ${redactUrl(url)} is not empty (${names.length} tables: ${names.slice(0, 5).join(', ')}`
          + `${names.length > 5 ? ', …' : ''}); store migrate copies into an empty database only`);
      }
      await migrateInTransaction(client, scopes, clock);
      await client.query('SET CONSTRAINTS ALL DEFERRED');
      const digests = new Map<string, TableDigest>();
      source.exec('BEGIN'); // one read snapshot of the source for every table
      try {
        for (const table of tables) {
          await client.query(`DELETE FROM ${quoteIdent(table)}`); // rows the migrations seeded come from the source instead
          const digest = new TableDigest();
          let batch: Array<Record<string, unknown>> = [];
          for (const row of source.prepare(`SELECT * FROM ${quoteIdent(table)}`).iterate() as IterableIterator<Record<string, unknown>>) {
            digest.add(row);
            batch.push(row);
            if (batch.length === BATCH) {
              await insertRows(client, table, batch);
              batch = [];
            }
          }
          await insertRows(client, table, batch);
          digests.set(table, digest);
        }
      } finally {
        source.exec('COMMIT');
      }
      await syncIdentities(client);
      await client.query('SET CONSTRAINTS ALL IMMEDIATE'); // foreign keys checked here, before the digests are read
      const reports: TableReport[] = [];
      for (const table of tables) {
        const target = new TableDigest();
        for (const row of (await client.query(`SELECT * FROM ${quoteIdent(table)}`)).rows as Array<Record<string, unknown>>) target.add(row);
        const sourceDigest = digests.get(table)!;
        reports.push({ table, sourceRows: sourceDigest.rows, targetRows: target.rows, sourceDigest: sourceDigest.digest(), targetDigest: target.digest() });
      }
      if (reports.some((r) => r.sourceRows !== r.targetRows || r.sourceDigest !== r.targetDigest)) throw new CopyMismatchError(reports);
      return reports;
    });
  } finally {
    await pool.end();
  }
}
