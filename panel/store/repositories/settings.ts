// Key/value settings stored as JSON text, one row per key (system config, license public key, later page settings).
import type { Db } from '../db.ts';

/** Reads and writes `settings`; values are JSON. */
export class SettingsRepository {
  private readonly getRow;
  private readonly putRow;
  private readonly deleteRow;

  constructor(private readonly db: Db) {
    this.getRow = db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?');
    this.putRow = db.prepare<[string, string, string]>(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    this.deleteRow = db.prepare<[string]>('DELETE FROM settings WHERE key = ?');
  }

  /** The parsed value of `key`, or undefined when unset or unreadable. */
  get<T>(key: string): T | undefined {
    const row = this.getRow.get(key);
    if (!row) return undefined;
    try {
      return JSON.parse(row.value) as T;
    } catch {
      return undefined;
    }
  }

  set(key: string, value: unknown, now = new Date()): void {
    this.putRow.run(key, JSON.stringify(value), now.toISOString());
  }

  /** Sets several keys in one transaction. */
  setMany(values: Record<string, unknown>, now = new Date()): void {
    this.db.transaction(() => {
      for (const [key, value] of Object.entries(values)) this.set(key, value, now);
    })();
  }

  delete(key: string): void {
    this.deleteRow.run(key);
  }
}
