// Keys of the web host (session signing, CSRF cookie signing), created once and kept sealed in `web_secrets`.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../panel/shared/clock.ts';
import type { Sealer } from '../extension.ts';
import type { Db } from '../store/db.ts';

/** The 32-byte key named `name`, made and stored (sealed) on first use. */
export function webSecret(db: Db, box: Sealer, clock: Clock, name: string): Buffer {
  const row = db.prepare('SELECT value_sealed FROM web_secrets WHERE name = ?').get(name) as { value_sealed: string } | undefined;
  if (row) return Buffer.from(box.open(row.value_sealed), 'base64');
  const key = randomBytes(32);
  db.prepare('INSERT OR IGNORE INTO web_secrets (name, value_sealed, created_at) VALUES (?, ?, ?)').run(name, box.seal(key.toString('base64')), clock.now().toISOString());
  // Another process may have won the insert: read back what is stored.
  const stored = db.prepare('SELECT value_sealed FROM web_secrets WHERE name = ?').get(name) as { value_sealed: string };
  return Buffer.from(box.open(stored.value_sealed), 'base64');
}
