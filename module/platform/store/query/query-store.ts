// The platform's typed query layer: one Kysely instance over SQLite (better-sqlite3, the embedded default) or PostgreSQL
// (pg), chosen by `--store` / VPNHOST_PLATFORM_STORE. Repositories written against it run unchanged on both engines.
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery, type Expression, type QueryResult, type RawBuilder, type Transaction } from 'kysely';
import pg from 'pg';
import { systemClock, type Clock } from '../../../../shared/clock.ts';
import { openPlatformDb, type Db } from '../db.ts';
import { MODULE_HOST_MIGRATIONS, MODULE_HOST_SCOPE } from '../../services/module-store.ts';
import { PLATFORM_DB_SCOPES } from '../scopes.ts';
import { runMigrations } from '../migrator.ts';
import { migratePostgres, type ScopeList } from '../sql/pg-migrator.ts';
import { PreparingClient } from './prepared-pg-client.ts';
import type { StoreTables } from './tables.ts';

/** The environment variable naming the platform store (`--store` wins over it). */
export const STORE_ENV = 'VPNHOST_PLATFORM_STORE';

export type StoreEngine = 'sqlite' | 'postgres';

/** Where the platform's data lives: `platform.db` in a data directory, or a PostgreSQL database. */
export type StoreTarget = { engine: 'sqlite'; dataDir: string } | { engine: 'postgres'; url: string };

/** Every scope the platform process migrates on its own (modules' scopes come with their manifests). */
export const PLATFORM_STORE_SCOPES: ScopeList = [...PLATFORM_DB_SCOPES, [MODULE_HOST_SCOPE, MODULE_HOST_MIGRATIONS]];

/** `postgres://…` / `postgresql://…` → PostgreSQL; anything else (or nothing) → SQLite in `dataDir`. */
export function storeTarget(store: string | undefined, dataDir: string): StoreTarget {
  const spec = store ?? process.env[STORE_ENV];
  if (spec && /^postgres(?:ql)?:\/\//.test(spec)) return { engine: 'postgres', url: spec };
  if (spec && spec !== 'sqlite') throw new Error(`--store: expected sqlite or postgres://USER@HOST:PORT/DB, got ${JSON.stringify(redactUrl(spec))}`);
  return { engine: 'sqlite', dataDir };
}

/** The URL without its password (for messages and logs). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]+):[^@]*@/i, '$1:***@');
}

/** PostgreSQL's int8 (COUNT, bigint columns) and numeric (SUM) read as numbers, as SQLite answers them. */
const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * A pool on `url` whose integers are numbers. An idle connection the server ends (a restart, a fail-over) is dropped
 * from the pool and reported to `onIdleError` instead of crashing the process; the next query opens a new one. With
 * `prepared`, parameterised queries run as named prepared statements (prepared-pg-client.ts): the query layer's pool.
 */
export function createPgPool(url: string, max = 10, onIdleError: (error: Error) => void = () => undefined, prepared = false): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: PG_TYPES, ...(prepared ? { Client: PreparingClient } : {}) });
  pool.on('error', onIdleError);
  return pool;
}

/** The query layer over one engine. */
export interface QueryStore {
  readonly engine: StoreEngine;
  readonly db: Kysely<StoreTables>;
  /** The text of member `key` of a JSON text column (`json_extract` / `->>`), null when absent. */
  jsonText(column: string, key: string): RawBuilder<string | null>;
  /** True when `text` occurs in `haystack`, case-sensitively (`instr` / `strpos`). */
  contains(haystack: Expression<string | null>, text: string): RawBuilder<boolean>;
  /** A new random UUID (v4, lower-case text) per row (`randomblob` / `gen_random_uuid`). */
  randomUuid(): RawBuilder<string>;
  /** A JSON object text of `members` (`json_object` / `json_build_object`). */
  jsonObject(members: Record<string, Expression<unknown>>): RawBuilder<string>;
  /** The day `days` (an integer, or text holding one) after `day` (YYYY-MM-DD text), as YYYY-MM-DD text. */
  addDays(day: Expression<string | null>, days: Expression<unknown>): RawBuilder<string>;
  /**
   * Applies the steps of `scopes` not yet recorded (a module's own scope, when it is mounted) on this engine; answers
   * the versions applied per scope. On PostgreSQL the platform's scopes are part of the reference run (a module's
   * tables may reference the platform's).
   */
  migrate(scopes: ScopeList, clock?: Clock): Promise<Record<string, number[]>>;
  /**
   * Runs `work` in one transaction and answers its result: every repository built on the store `work` receives
   * (`new XQueries(tx)`) writes inside it; a throw rolls all of it back. Inside a transaction this joins the outer one
   * (Kysely has no nested transactions). On SQLite the transaction holds the one connection: do not await, inside it,
   * anything that writes through the synchronous repositories on the same handle.
   */
  transaction<T>(work: (tx: QueryStore) => Promise<T>): Promise<T>;
  /** True on a store handed out by `transaction`. */
  readonly inTransaction: boolean;
  /**
   * The result of a compiled statement (`query`, built by `db` like any other) run at once, synchronously, on the
   * prepared statement of its SQL — on SQLite, outside a transaction, while no transaction holds the connection (a
   * page's reads and a job's single-statement writes skip the executor's connection lock, its waiters and its promise
   * hops) — or, by a transaction's store, inside that transaction while it is open. Undefined when it cannot be run so
   * (PostgreSQL, the connection inside another transaction, a transaction that ended): run it through `db`.
   */
  runNow<R>(query: CompiledQuery<R>): QueryResult<R> | undefined;
  /**
   * A mark of the database's state as this store's connection sees it, or undefined where there is none (PostgreSQL, a
   * transaction's store). Two equal marks taken before and after some reads mean nothing was written in between by
   * anyone: on SQLite it joins `PRAGMA data_version` (changes when another connection — of this process or another —
   * commits) and `total_changes()` (rows this connection wrote, rolled back or not). A mark taken before a read and
   * equal to the current one means the read would answer the same now (`MarkedCache`: the client area's sessions and pages).
   * Coarse: any write anywhere in the database changes it. Not counted: schema changes made on this connection (a
   * module's migration at mount) — they change no row a page reads.
   */
  changeMark(): string | undefined;
  /** Closes what this store opened (a shared SQLite handle stays open). */
  close(): Promise<void>;
}

/** What a store and its transactions' stores share: the engine's functions. */
type StoreBase = Omit<QueryStore, 'db' | 'transaction' | 'inTransaction' | 'close' | 'runNow' | 'changeMark'>;

/** A transaction's `runNow` (SQLite), given whether that transaction is still the one open on the connection. */
type TransactionRunNow = (open: () => boolean) => QueryStore['runNow'];

/** `base` bound to a Kysely transaction: the same functions, `transaction` joins, `close` is the outer store's business. */
function transactionStore(base: StoreBase, trx: Transaction<StoreTables>, runNow: QueryStore['runNow']): QueryStore {
  const tx: QueryStore = {
    ...base, db: trx, inTransaction: true, runNow, changeMark: () => undefined,
    transaction: (work) => work(tx),
    close: async () => { throw new Error('close() is not available inside a transaction'); },
  };
  return tx;
}

/** The `transaction` of a store over `db`; `runNow` runs compiled statements at once inside it (SQLite). */
function transactionOf(base: StoreBase, db: Kysely<StoreTables>, runNow?: TransactionRunNow): QueryStore['transaction'] {
  if (!runNow) return (work) => db.transaction().execute((trx) => work(transactionStore(base, trx, () => undefined)));
  return (work) => db.transaction().execute(async (trx) => {
    let open = true;
    try {
      return await work(transactionStore(base, trx, runNow(() => open)));
    } finally {
      open = false;
    }
  });
}

/** The functions whose SQL differs between the engines. */
function dialectFunctions(engine: StoreEngine): Pick<QueryStore, 'jsonText' | 'contains' | 'randomUuid' | 'jsonObject' | 'addDays'> {
  const members = (m: Record<string, Expression<unknown>>) => sql.join(Object.entries(m).map(([key, value]) => sql`${sql.lit(key)}, ${value}`));
  return engine === 'sqlite'
    ? {
      jsonText: (column, key) => sql<string | null>`json_extract(${sql.ref(column)}, ${`$.${key}`})`,
      contains: (haystack, text) => sql<boolean>`instr(${haystack}, ${text}) > 0`,
      randomUuid: () => sql<string>`(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
        || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))`,
      jsonObject: (m) => sql<string>`json_object(${members(m)})`,
      addDays: (day, days) => sql<string>`date(${day}, '+' || cast(${days} as integer) || ' days')`,
    }
    : {
      jsonText: (column, key) => sql<string | null>`(${sql.ref(column)}::jsonb ->> ${key})`,
      contains: (haystack, text) => sql<boolean>`strpos(${haystack}, ${text}) > 0`,
      randomUuid: () => sql<string>`gen_random_uuid()::text`,
      jsonObject: (m) => sql<string>`json_build_object(${members(m)})::text`,
      addDays: (day, days) => sql<string>`to_char(cast(${day} as date) + cast(cast(${days} as text) as integer), 'YYYY-MM-DD')`,
    };
}

/** Distinct SQL texts kept prepared per handle (queries with `IN (…)` lists of many lengths stop being kept past it). */
const PREPARED_LIMIT = 1000;

/**
 * `handle.prepare` that reuses the statement of an SQL text already seen: Kysely asks for a statement on every query,
 * and preparing costs several times what running a small indexed query does.
 */
function preparedOnce(handle: Db): (text: string) => ReturnType<Db['prepare']> {
  const kept = new Map<string, ReturnType<Db['prepare']>>();
  return (text) => {
    let prepared = kept.get(text);
    if (!prepared) {
      prepared = handle.prepare(text);
      if (kept.size < PREPARED_LIMIT) kept.set(text, prepared);
    }
    return prepared;
  };
}

/** The query layer over an open platform database handle (shared with the synchronous repositories; not closed). */
export function sqliteQueryStore(handle: Db): QueryStore {
  // A transaction takes the write lock when it begins (as the synchronous repositories' `.immediate()` did): one that
  // read first and wrote later could fail with SQLITE_BUSY when another process wrote in between.
  const prepare = preparedOnce(handle);
  const database = { prepare: (text: string) => prepare(text === 'begin' ? 'begin immediate' : text), close: () => undefined };
  const db = new Kysely<StoreTables>({ dialect: new SqliteDialect({ database }) });
  const migrate = async (scopes: ScopeList, clock: Clock = systemClock) =>
    Object.fromEntries(scopes.map(([scope, steps]) => [scope, runMigrations(handle, scope, steps, clock)]));
  const base = { engine: 'sqlite' as const, ...dialectFunctions('sqlite'), migrate };
  // Kysely's SQLite driver runs each query synchronously on the same handle once it holds the connection, a statement
  // that returns rows by `all`, any other by `run` (its answer built as the driver builds it). One run here while no
  // transaction is open reads and writes exactly what a query through `db` would, as its own autocommit; one run by a
  // transaction's store while that transaction is open (Kysely holds the connection for it: it is the handle's only
  // one) runs inside it, as the transaction's executor would, without its promise hops.
  const run = <R>(query: CompiledQuery<R>): QueryResult<R> => {
    const statement = prepare(query.sql);
    if (statement.reader) return { rows: statement.all(query.parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  };
  const runNow = <R>(query: CompiledQuery<R>): QueryResult<R> | undefined => (handle.inTransaction ? undefined : run(query));
  const runInTransaction: TransactionRunNow = (open) => (query) => (open() && handle.inTransaction ? run(query) : undefined);
  const dataVersion = handle.prepare('PRAGMA data_version').pluck();
  const ownChanges = handle.prepare('SELECT total_changes()').pluck();
  const changeMark = () => `${String(dataVersion.get())}:${String(ownChanges.get())}`;
  return { ...base, db, transaction: transactionOf(base, db, runInTransaction), inTransaction: false, runNow, changeMark, close: () => db.destroy() };
}

/** The query layer over a PostgreSQL pool (ended by `close`). */
function postgresQueryStore(pool: pg.Pool): QueryStore {
  const db = new Kysely<StoreTables>({ dialect: new PostgresDialect({ pool }) });
  const migrate = async (scopes: ScopeList, clock: Clock = systemClock) => {
    const own = new Set(PLATFORM_STORE_SCOPES.map(([scope]) => scope));
    const applied = await migratePostgres(pool, [...PLATFORM_STORE_SCOPES, ...scopes.filter(([scope]) => !own.has(scope))], clock);
    return Object.fromEntries(scopes.map(([scope]) => [scope, applied[scope] ?? []]));
  };
  const base = { engine: 'postgres' as const, ...dialectFunctions('postgres'), migrate };
  return { ...base, db, transaction: transactionOf(base, db), inTransaction: false, runNow: () => undefined, changeMark: () => undefined, close: () => db.destroy() };
}

/** Opens the store of `target` with every platform migration applied (SQLite: `openPlatformDb`; PostgreSQL: `migratePostgres`). */
export async function openQueryStore(target: StoreTarget, clock: Clock = systemClock): Promise<QueryStore> {
  if (target.engine === 'sqlite') {
    const handle = openPlatformDb(target.dataDir, clock);
    for (const [scope, migrations] of PLATFORM_STORE_SCOPES) runMigrations(handle, scope, migrations, clock);
    const store = sqliteQueryStore(handle);
    return { ...store, close: async () => { await store.close(); handle.close(); } };
  }
  const pool = createPgPool(target.url, 10, undefined, true);
  try {
    await migratePostgres(pool, PLATFORM_STORE_SCOPES, clock);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return postgresQueryStore(pool);
}
