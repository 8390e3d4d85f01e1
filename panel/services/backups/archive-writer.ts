// Writes a backup zip: an online SQLite snapshot of the whole store, the data-plane summary and the file list.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream/promises';
import type { Archiver, ArchiverOptions } from 'archiver';
import Database from 'better-sqlite3';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Db } from '../../store/db.ts';
import {
  BASELINE_TABLE, DATABASE_NAME, DATAPLANE_DIR, FILE_LIST_NAME, KEY_CHECK_PLAIN, STATISTICS_TABLES,
  type FileList, type ListedFile,
} from './archive-format.ts';
import { fileListText, signFileList, type ManifestKey } from './archive-signature.ts';

/** archiver 7's factory (its CommonJS export; @types/archiver 8 describes the later class API). */
const archiver = createRequire(import.meta.url)('archiver') as (format: 'zip', opts: ArchiverOptions) => Archiver;

/** What one archive holds besides the store. */
export interface ArchiveInput {
  /** The live store; snapshotted with SQLite's online backup API (never a copy of the live file). */
  db: Db;
  /** Keep the traffic statistics (else their tables are emptied in the snapshot). */
  statistics: boolean;
  /** Data-plane files: name inside `dataplane/` → text. */
  dataplane: Map<string, string>;
  /** Further files at the archive's top level (name → text), e.g. the passphrase-wrapped data key. */
  extra?: Map<string, string>;
  /** Seals the key check and signs the manifest (the panel's SecretBox). */
  key: Pick<SecretBox, 'seal'> & ManifestKey;
  panelVersion: string;
  createdAt: Date;
}

/** Tables emptied in every snapshot: live counters of this host and machine credentials (restore keeps the live ones). */
const ALWAYS_EMPTIED = [BASELINE_TABLE, 'access_hashes'];

/** SHA-256 (hex) and size of a file, streamed. */
async function fileDigest(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/**
 * Snapshots `db` into `target` (online backup), then — on the copy only — empties the tables the archive leaves out
 * and VACUUMs so their pages leave no trace. Returns the snapshot's migration versions.
 */
export async function snapshotStore(db: Db, target: string, statistics: boolean): Promise<number[]> {
  await db.backup(target);
  const copy = new Database(target);
  try {
    copy.pragma('journal_mode = DELETE');
    const tables = new Set(copy.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
    const emptied = [...ALWAYS_EMPTIED, ...(statistics ? [] : STATISTICS_TABLES)];
    copy.transaction(() => {
      for (const table of emptied) if (tables.has(table)) copy.exec(`DELETE FROM "${table}"`);
    })();
    copy.exec('VACUUM');
    return copy.prepare<[], number>('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
  } finally {
    copy.close();
  }
}

/** Writes the archive to `<dir>/<name>` (through `<name>.part`, renamed when complete). */
export async function writeArchive(dir: string, name: string, input: ArchiveInput): Promise<void> {
  const work = mkdtempSync(join(dir, '.work-'));
  const part = join(dir, `${name}.part`);
  try {
    const dbPath = join(work, DATABASE_NAME);
    const schemaVersions = await snapshotStore(input.db, dbPath, input.statistics);
    const files: ListedFile[] = [{ name: DATABASE_NAME, ...(await fileDigest(dbPath)) }];
    const texts: ZipEntry[] = [];
    const named = [...[...input.dataplane].map(([file, text]) => [`${DATAPLANE_DIR}${file}`, text]), ...(input.extra ?? [])];
    for (const [entry, text] of named) {
      const body = Buffer.from(text, 'utf8');
      texts.push({ name: entry, body });
      files.push({ name: entry, size: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    }
    const list = signFileList({
      format: 'vpnhost-panel-backup', version: 2, created_at: input.createdAt.toISOString(),
      panel_version: input.panelVersion, statistics: input.statistics, schema_versions: schemaVersions,
      key_check: input.key.seal(KEY_CHECK_PLAIN), files,
    }, input.key);
    await zipEntries(part, list, [{ name: DATABASE_NAME, path: dbPath }, ...texts], input.createdAt);
    if (statSync(part).size === 0) throw new Error('empty archive written');
    renameSync(part, join(dir, name));
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(part, { force: true });
  }
}

/** One archive entry: a file on disk (`path`) or bytes in memory (`body`). */
export interface ZipEntry {
  name: string;
  path?: string;
  body?: Buffer;
}

/** Writes `target` as a zip of `filelist.json` (`list`) and `entries` (in that order), every entry dated `date`. */
export async function zipEntries(target: string, list: FileList, entries: ZipEntry[], date: Date): Promise<void> {
  const zip = archiver('zip', { zlib: { level: 6 } });
  const done = pipeline(zip, createWriteStream(target, { mode: 0o600 }));
  zip.append(fileListText(list), { name: FILE_LIST_NAME, date });
  for (const e of entries) {
    if (e.path !== undefined) zip.file(e.path, { name: e.name, date });
    else zip.append(e.body ?? Buffer.alloc(0), { name: e.name, date });
  }
  await zip.finalize();
  await done;
}
