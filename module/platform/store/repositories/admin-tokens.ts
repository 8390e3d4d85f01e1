// Admin API bearer tokens: shown once at creation, stored as a SHA-256 digest only.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db.ts';

export interface AdminTokenSummary {
  id: number;
  comment: string;
  created_at: string;
  last_used_at: string | null;
}

const TOKEN_PREFIX = 'vpa_';

/** SHA-256 hex digest of a token. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Repository of the `admin_tokens` table. */
export class AdminTokenRepository {
  private readonly findStmt;
  private readonly touchStmt;
  private readonly touched = new Map<number, number>();

  constructor(private readonly db: Db) {
    this.findStmt = db.prepare('SELECT id FROM admin_tokens WHERE digest = ?');
    this.touchStmt = db.prepare('UPDATE admin_tokens SET last_used_at = ? WHERE id = ?');
  }

  /** Creates a token and returns its value; only the digest is kept. */
  create(comment = ''): { id: number; token: string } {
    const token = TOKEN_PREFIX + randomBytes(32).toString('hex');
    const result = this.db
      .prepare('INSERT INTO admin_tokens (digest, comment, created_at) VALUES (?, ?, ?)')
      .run(tokenDigest(token), comment, new Date().toISOString());
    return { id: Number(result.lastInsertRowid), token };
  }

  /** The id of the token when it is valid (lookup by digest, so no comparison of secrets happens), else null. */
  verify(token: string): number | null {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
    const row = this.findStmt.get(tokenDigest(token)) as { id: number } | undefined;
    if (!row) return null;
    const now = Date.now();
    if ((this.touched.get(row.id) ?? 0) < now - 60_000) {
      this.touched.set(row.id, now);
      this.touchStmt.run(new Date(now).toISOString(), row.id);
    }
    return row.id;
  }

  list(): AdminTokenSummary[] {
    return this.db.prepare('SELECT id, comment, created_at, last_used_at FROM admin_tokens ORDER BY id').all() as AdminTokenSummary[];
  }

  /** Deletes a token; true when it existed. */
  delete(id: number): boolean {
    return this.db.prepare('DELETE FROM admin_tokens WHERE id = ?').run(id).changes > 0;
  }
}
