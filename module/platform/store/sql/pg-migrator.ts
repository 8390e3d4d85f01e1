// The platform's migrations on PostgreSQL, from the same source as on SQLite: each scope's steps are run on a reference
// SQLite database in memory, the schema they produce is read back and rendered as PostgreSQL DDL (all of it on a fresh
// database, the additive difference on an upgrade). One transaction under an advisory lock: processes racing at boot
// apply each step once. The ledger has SQLite's layout: platform_migrations(scope, version, name, applied_at).
import Database from 'better-sqlite3';
import type pg from 'pg';
import { systemClock, type Clock } from '../../../../shared/clock.ts';
import { runMigrations, type Migration } from '../migrator.ts';
import { additiveDiffSql, CREATE_NOCASE_COLLATION, quoteIdent, schemaSql } from './pg-ddl.ts';
import { readSqliteSchema } from './schema-model.ts';

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

/** One thing to do on PostgreSQL: a statement, rows to insert (a step's seed rows), or a step's own function. */
export type PlanItem = { sql: string } | { table: string; rows: Array<Record<string, unknown>> }
  | { run: (client: pg.ClientBase, clock: Clock) => Promise<void> };

/** What the reference run says PostgreSQL needs, and the steps it records. */
export interface Plan {
  items: PlanItem[];
  pending: Array<{ scope: string; step: Migration }>;
}

/** The rows the reference run left in `tables` (seeds such as the Administrator role). */
function seedsOf(ref: Database.Database, tables: Array<{ name: string }>): PlanItem[] {
  return tables.map((t) => ({ table: t.name, rows: ref.prepare(`SELECT * FROM ${quoteIdent(t.name)}`).all() as Array<Record<string, unknown>> }))
    .filter((seed) => seed.rows.length > 0);
}

/**
 * Plans the steps of `scopes` not in `ledger` (scope → recorded versions). A fresh database (no scope recorded) gets
 * the whole schema the steps produce, with the rows they seed. An existing one gets each pending step in order: its
 * `postgres` form when it has one, else the additive difference it made to the reference schema (refused for a step
 * that runs code or changes rows: those need a `postgres` form).
 */
function planPostgres(scopes: ScopeList, ledger: Map<string, Set<number>>, clock: Clock = systemClock): Plan {
  const ref = new Database(':memory:');
  try {
    ref.pragma('foreign_keys = ON');
    const recorded = (scope: string, m: Migration): boolean => ledger.get(scope)?.has(m.version) ?? false;
    runReference(ref, scopes.map(([scope, list]) => [scope, list.filter((m) => recorded(scope, m))] as const), clock);
    const pending = scopes.flatMap(([scope, list]) => [...list].sort((a, b) => a.version - b.version)
      .filter((m) => !recorded(scope, m)).map((step) => ({ scope, step })));
    const fresh = ![...ledger.values()].some((versions) => versions.size > 0);
    if (fresh) {
      for (const { scope, step } of pending) runMigrations(ref, scope, [step], clock);
      const model = readSqliteSchema(ref);
      return { items: [...schemaSql(model).map((text) => ({ sql: text })), ...seedsOf(ref, model.tables)], pending };
    }
    const items: PlanItem[] = [];
    for (const { scope, step } of pending) {
      const what = `migration ${scope} v${step.version} ${step.name}`;
      if (step.postgres === undefined && (typeof step.up !== 'string' || DATA_STATEMENT.test(step.up))) {
        throw new Error(`${what} changes rows; on PostgreSQL it needs a portable form (its \`postgres\` member, docs/store.md)`);
      }
      const before = readSqliteSchema(ref);
      runMigrations(ref, scope, [step], clock);
      if (step.postgres !== undefined) {
        items.push(typeof step.postgres === 'string' ? { sql: step.postgres } : { run: step.postgres });
        continue;
      }
      const after = readSqliteSchema(ref);
      items.push(...additiveDiffSql(before, after, what).map((text) => ({ sql: text })));
      const known = new Set(before.tables.map((t) => t.name));
      items.push(...seedsOf(ref, after.tables.filter((t) => !known.has(t.name))));
    }
    return { items, pending };
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
  return inPgTransaction(pool, (client) => migrateInTransaction(client, scopes, clock));
}

/** Runs `fn` on one connection of `pool` inside a transaction: committed when it resolves, rolled back when it throws. */
export async function inPgTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const value = await fn(client);
    await client.query('COMMIT');
    return value;
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
  for (const item of plan.items) {
    if ('sql' in item) await client.query(item.sql);
    else if ('run' in item) await item.run(client, clock);
    else await insertRows(client, item.table, item.rows);
  }
  if (plan.items.some((item) => 'rows' in item)) await syncIdentities(client);
  const appliedAt = clock.now().toISOString();
  const applied: Record<string, number[]> = Object.fromEntries(scopes.map(([scope]) => [scope, [] as number[]]));
  for (const { scope, step } of plan.pending) {
    await client.query('INSERT INTO platform_migrations (scope, version, name, applied_at) VALUES ($1, $2, $3, $4)', [scope, step.version, step.name, appliedAt]);
    applied[scope].push(step.version);
  }
  return applied;
}
