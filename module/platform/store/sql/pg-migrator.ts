// The platform's migrations on PostgreSQL, from the same source as on SQLite: each scope's steps are run on a reference
// SQLite database in memory, the schema they produce is read back and rendered as PostgreSQL DDL (all of it on a fresh
// database, the additive difference on an upgrade). One transaction under an advisory lock: processes racing at boot
// apply each step once. The ledger has SQLite's layout: platform_migrations(scope, version, name, applied_at).
import Database from 'better-sqlite3';
import type pg from 'pg';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import { runMigrations, type Migration } from '../migrator.ts';
import { additiveDiffSql, CREATE_NOCASE_COLLATION, quoteIdent, schemaSql } from './pg-ddl.ts';
import { readSqliteSchema, type SchemaModel } from './schema-model.ts';

/** Scope name → its ordered steps, in the order a fresh database is built. */
export type ScopeList = ReadonlyArray<readonly [scope: string, migrations: readonly Migration[]]>;

/** The advisory lock key of the platform migrator (any constant both engines' callers agree on). */
export const MIGRATION_LOCK_KEY = 0x76706e68; // 'vpnh'

const LEDGER_DDL = `CREATE TABLE IF NOT EXISTS platform_migrations (
  scope text NOT NULL, version bigint NOT NULL, name text NOT NULL, applied_at text NOT NULL, PRIMARY KEY (scope, version))`;

/** A text step that changes rows (not only the schema): it has no derived form on a database holding data. */
const DATA_STATEMENT = /\b(?:INSERT|UPDATE|DELETE)\b/i;

/** Applies `steps` to `ref` in order, scope by scope (the reference run of the SQLite history). */
function runReference(ref: Database.Database, steps: ScopeList, clock: Clock): void {
  for (const [scope, migrations] of steps) if (migrations.length > 0) runMigrations(ref, scope, migrations, clock);
}

/** What the reference run says PostgreSQL needs: DDL and seed rows, per scope the versions it records. */
interface Plan {
  ddl: string[];
  seeds: Array<{ table: string; rows: Array<Record<string, unknown>> }>;
  pending: Array<{ scope: string; step: Migration }>;
}

/** Plans the steps of `scopes` not in `ledger` (scope → recorded versions). */
export function planPostgres(scopes: ScopeList, ledger: Map<string, Set<number>>, clock: Clock = systemClock): Plan {
  const ref = new Database(':memory:');
  try {
    ref.pragma('foreign_keys = ON');
    const applied = scopes.map(([scope, list]) => [scope, list.filter((m) => ledger.get(scope)?.has(m.version))] as const);
    const pendingLists = scopes.map(([scope, list]) => [scope, list.filter((m) => !ledger.get(scope)?.has(m.version))] as const);
    const started = (scope: string): boolean => (ledger.get(scope)?.size ?? 0) > 0;
    const fresh = ![...ledger.keys()].some(started);
    runReference(ref, applied, clock);
    const before: SchemaModel = fresh ? { tables: [], indexes: [] } : readSqliteSchema(ref);
    const pending = pendingLists.flatMap(([scope, list]) => list.map((step) => ({ scope, step })));
    // A scope already holding rows can only take schema steps; a scope's first steps meet empty tables.
    for (const { scope, step } of pending) {
      if (started(scope)) {
        if (typeof step.up !== 'string' || DATA_STATEMENT.test(step.up)) {
          throw new Error(`migration ${scope} v${step.version} ${step.name} changes rows; on PostgreSQL it needs a portable form (docs/store.md)`);
        }
      }
    }
    runReference(ref, pendingLists, clock);
    const after = readSqliteSchema(ref);
    const ddl = fresh ? schemaSql(after) : additiveDiffSql(before, after, 'PostgreSQL migration');
    const known = new Set(before.tables.map((t) => t.name));
    const seeds = after.tables.filter((t) => !known.has(t.name)).map((t) => ({
      table: t.name, rows: ref.prepare(`SELECT * FROM ${quoteIdent(t.name)}`).all() as Array<Record<string, unknown>>,
    })).filter((s) => s.rows.length > 0);
    return { ddl, seeds, pending };
  } finally {
    ref.close();
  }
}

/** Inserts `rows` into `table` as they are (explicit ids included). */
export async function insertRows(client: pg.PoolClient | pg.Client, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const perBatch = Math.max(1, Math.floor(30_000 / columns.length));
  for (let start = 0; start < rows.length; start += perBatch) {
    const batch = rows.slice(start, start + perBatch);
    const params: unknown[] = [];
    const values = batch.map((row) => `(${columns.map((c) => { params.push(row[c]); return `$${params.length}`; }).join(', ')})`);
    await client.query(`INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) VALUES ${values.join(', ')}`, params);
  }
}

/** Moves every identity column's sequence past the largest id present (after rows were inserted with explicit ids). */
export async function syncIdentities(client: pg.PoolClient | pg.Client): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'");
  for (const { table_name: table, column_name: column } of rows) {
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT MAX(${quoteIdent(column)}) FROM ${quoteIdent(table)}), 0) + 1, false)`,
      [quoteIdent(table), column]);
  }
}

/**
 * Brings the PostgreSQL database of `pool` to the steps of `scopes`; returns the versions applied per scope. Everything
 * runs in one transaction holding `pg_advisory_xact_lock(MIGRATION_LOCK_KEY)`, so concurrent callers wait and then find
 * the work done. Recorded versions the lists do not know (a newer release's) are left alone.
 */
export async function migratePostgres(pool: pg.Pool, scopes: ScopeList, clock: Clock = systemClock): Promise<Record<string, number[]>> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const applied = await migrateInTransaction(client, scopes, clock);
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** `migratePostgres`'s work inside the caller's open transaction (which then holds the advisory lock until it ends). */
export async function migrateInTransaction(client: pg.PoolClient | pg.Client, scopes: ScopeList, clock: Clock = systemClock): Promise<Record<string, number[]>> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
  await client.query(CREATE_NOCASE_COLLATION);
  await client.query(LEDGER_DDL);
  const recorded = await client.query<{ scope: string; version: string | number }>('SELECT scope, version FROM platform_migrations');
  const ledger = new Map<string, Set<number>>(scopes.map(([scope]) => [scope, new Set<number>()]));
  for (const row of recorded.rows) {
    if (!ledger.has(row.scope)) ledger.set(row.scope, new Set());
    ledger.get(row.scope)!.add(Number(row.version));
  }
  const plan = planPostgres(scopes, ledger, clock);
  for (const statement of plan.ddl) await client.query(statement);
  for (const seed of plan.seeds) await insertRows(client, seed.table, seed.rows);
  if (plan.seeds.length > 0) await syncIdentities(client);
  const appliedAt = clock.now().toISOString();
  const applied: Record<string, number[]> = Object.fromEntries(scopes.map(([scope]) => [scope, [] as number[]]));
  for (const { scope, step } of plan.pending) {
    await client.query('INSERT INTO platform_migrations (scope, version, name, applied_at) VALUES ($1, $2, $3, $4)', [scope, step.version, step.name, appliedAt]);
    applied[scope].push(step.version);
  }
  return applied;
}
