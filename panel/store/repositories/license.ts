// The single installed-license row: the sealed key, when it was installed and when it was last verified.
import type { Db } from '../db.ts';

/** The stored license (key sealed with SecretBox). */
export interface LicenseRow {
  key_sealed: string;
  installed_at: string;
  last_check: string | null;
}

/** Reads and writes the one-row `license` table. */
export class LicenseRepository {
  private readonly getRow;
  private readonly putRow;
  private readonly checkRow;
  private readonly deleteRow;

  constructor(db: Db) {
    this.getRow = db.prepare<[], LicenseRow>('SELECT key_sealed, installed_at, last_check FROM license WHERE id = 1');
    this.putRow = db.prepare<[string, string, string | null]>(
      `INSERT INTO license (id, key_sealed, installed_at, last_check) VALUES (1, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET key_sealed = excluded.key_sealed, installed_at = excluded.installed_at, last_check = excluded.last_check`,
    );
    this.checkRow = db.prepare<[string, string]>('UPDATE license SET last_check = ? WHERE id = 1 AND key_sealed = ?');
    this.deleteRow = db.prepare('DELETE FROM license WHERE id = 1');
  }

  get(): LicenseRow | undefined {
    return this.getRow.get();
  }

  put(keySealed: string, installedAt: string, lastCheck: string | null): void {
    this.putRow.run(keySealed, installedAt, lastCheck);
  }

  /** Records a verification of the key currently stored (no-op when it changed meanwhile). */
  touchLastCheck(keySealed: string, at: string): void {
    this.checkRow.run(at, keySealed);
  }

  clear(): void {
    this.deleteRow.run();
  }
}
