// Checks a snapshot database and copies it into the live store in one transaction, table by table (generic over tables).
import Database from 'better-sqlite3';
import { ApiError, E } from '../../http/errors.ts';
import { loadMigrations, migrate, type Db } from '../../store/db.ts';
import { BASELINE_TABLE } from './archive-format.ts';

/**
 * Tables restore never replaces: the migration record, this machine's API access hashes and the traffic baselines
 * (counters of this host's live data plane; each entry names its account id and key, and the sampler uses one only
 * for the account with that id and key, so entries of accounts the archive changed start at zero).
 */
const KEPT_TABLES = new Set(['schema_migrations', 'access_hashes', BASELINE_TABLE]);

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Opens the extracted snapshot, checks it is a panel database (integrity check, migration record, no migration
 * this panel does not know, `expectedVersions` as listed) and applies the migrations it lacks (an archive of an
 * older panel). Throws `Error backup reader: ...` otherwise. The file is changed only inside the work folder.
 */
export function prepareSnapshot(path: string, expectedVersions: number[]): void {
  let snap: Database.Database | null = null;
  try {
    snap = new Database(path, { fileMustExist: true });
    const check = snap.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
    const versions = snap.prepare<[], number>('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    if (versions.length === 0 || versions.join(',') !== [...expectedVersions].sort((a, b) => a - b).join(',')) {
      throw new Error('migration record differs from the file list');
    }
    const known = new Set(loadMigrations().map((m) => m.version));
    const unknown = versions.filter((v) => !known.has(v));
    if (unknown.length) throw new Error(`made by a newer panel (migrations ${unknown.join(', ')})`);
    snap.pragma('journal_mode = DELETE');
    migrate(snap);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(E.BACKUP_READER, `panel.db is not a usable panel database (${(err as Error).message})`);
  } finally {
    snap?.close();
  }
}

function tableNames(db: Db, schema: 'main' | 'snap'): string[] {
  return db.prepare<[], string>(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).pluck().all();
}

function columns(db: Db, schema: 'main' | 'snap', table: string): string[] {
  return db.prepare<[], { name: string }>(`PRAGMA ${schema}.table_info(${quote(table)})`).all().map((c) => c.name);
}

/** Tables written by triggers (named in a trigger body): copied again last, so the triggers' counting is overwritten. */
function triggerTargets(db: Db, tables: string[]): Set<string> {
  const bodies = db.prepare<[], string>("SELECT sql FROM main.sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL").pluck().all()
    .map((sql) => sql.slice(sql.search(/\bBEGIN\b/i)));
  return new Set(tables.filter((t) => bodies.some((b) => new RegExp(`\\b${t.replace(/[^A-Za-z0-9_]/g, '')}\\b`, 'i').test(b))));
}

/**
 * Replaces the content of every live table (except {@link KEPT_TABLES}) with the snapshot's, in one IMMEDIATE
 * transaction on the live connection, so the app's prepared statements stay valid and a failure leaves the live
 * store as it was. Traffic baselines (counters of this host's data plane) are kept as they are (see {@link KEPT_TABLES}).
 * Foreign keys are checked before the commit.
 */
export function applySnapshot(live: Db, snapshotPath: string): void {
  live.prepare('ATTACH DATABASE ? AS snap').run(snapshotPath);
  const fkWas = live.pragma('foreign_keys', { simple: true });
  live.pragma('foreign_keys = OFF');
  try {
    const snapTables = new Set(tableNames(live, 'snap'));
    const tables = tableNames(live, 'main').filter((t) => !KEPT_TABLES.has(t));
    const late = triggerTargets(live, tables);
    const copy = (table: string) => {
      live.exec(`DELETE FROM main.${quote(table)}`);
      if (!snapTables.has(table)) return;
      const snapCols = new Set(columns(live, 'snap', table));
      const cols = columns(live, 'main', table).filter((c) => snapCols.has(c)).map(quote).join(', ');
      if (cols) live.exec(`INSERT INTO main.${quote(table)} (${cols}) SELECT ${cols} FROM snap.${quote(table)}`);
    };
    live.transaction(() => {
      for (const table of tables) if (!late.has(table)) copy(table);
      for (const table of late) copy(table);
      // AUTOINCREMENT counters of the replaced tables: the archive's
      const hasSeq = (schema: string) => !!live.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE name = 'sqlite_sequence'`).get();
      if (hasSeq('main')) {
        const names = tables.map((t) => `'${t.replace(/'/g, "''")}'`).join(', ') || "''";
        live.exec(`DELETE FROM main.sqlite_sequence WHERE name IN (${names})`);
        if (hasSeq('snap')) live.exec(`INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM snap.sqlite_sequence WHERE name IN (${names})`);
      }
      const broken = live.prepare('PRAGMA main.foreign_key_check').all();
      if (broken.length) throw new Error(`${broken.length} rows of the archive break foreign keys`);
    }).immediate();
  } catch (err) {
    throw new ApiError(E.BACKUP_DELETE_OLD_CONFIG, (err as Error).message);
  } finally {
    live.pragma(`foreign_keys = ${fkWas ? 'ON' : 'OFF'}`);
    live.exec('DETACH DATABASE snap');
  }
}
