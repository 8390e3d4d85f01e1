// Access-hash rows: digest (SHA-256 hex), bound client IP, comment, creation time. Prepared statements only.
import type { Db } from '../db.ts';

/** A stored access hash (never the hash itself). */
export interface AccessHashRow {
  id: number;
  digest: string;
  ip: string;
  comment: string;
  created_at: string;
}

/** Reads and writes `access_hashes`; `dataVersion()` tells when another process has written. */
export class AccessHashRepository {
  private readonly byDigest;
  private readonly insertRow;
  private readonly all;
  private readonly remove;
  private readonly version;

  constructor(db: Db) {
    this.byDigest = db.prepare<[string], AccessHashRow>('SELECT id, digest, ip, comment, created_at FROM access_hashes WHERE digest = ?');
    this.insertRow = db.prepare<[string, string, string, string]>('INSERT INTO access_hashes (digest, ip, comment, created_at) VALUES (?, ?, ?, ?)');
    this.all = db.prepare<[], AccessHashRow>('SELECT id, digest, ip, comment, created_at FROM access_hashes ORDER BY id');
    this.remove = db.prepare<[number]>('DELETE FROM access_hashes WHERE id = ?');
    this.version = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  /** SQLite's data_version: changes whenever another connection (e.g. the CLI) commits to the database. */
  dataVersion(): number {
    return this.version.get() as number;
  }

  findByDigest(digest: string): AccessHashRow | undefined {
    return this.byDigest.get(digest);
  }

  insert(digest: string, ip: string, comment: string, createdAt: string): number {
    return Number(this.insertRow.run(digest, ip, comment, createdAt).lastInsertRowid);
  }

  list(): AccessHashRow[] {
    return this.all.all();
  }

  /** Deletes a row; true when it existed. */
  delete(id: number): boolean {
    return this.remove.run(id).changes > 0;
  }
}
