// Bearer tokens of the platform APIs (admin and worker scopes): shown once at creation, stored as a SHA-256 digest only.
import { createHash, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import type { Db } from '../db.ts';

/** `admin` tokens open `/api/admin/*`; `worker` tokens open only `/api/worker/*` (remote worker processes). */
export type TokenScope = 'admin' | 'worker';

export interface AdminTokenSummary {
  id: number;
  comment: string;
  created_at: string;
  last_used_at: string | null;
}

const TOKEN_PREFIX: Record<TokenScope, string> = { admin: 'vpa_', worker: 'vpw_' };

/** SHA-256 hex digest of a token. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Repository of the `admin_tokens` table, restricted to the tokens of one scope (admin by default). */
export class AdminTokenRepository {
  private readonly findStmt;
  private readonly touchStmt;
  private readonly touched = new Map<number, number>();

  constructor(private readonly db: Db, readonly scope: TokenScope = 'admin', private readonly clock: Clock = systemClock) {
    this.findStmt = db.prepare('SELECT id FROM admin_tokens WHERE digest = ? AND scope = ?');
    this.touchStmt = db.prepare('UPDATE admin_tokens SET last_used_at = ? WHERE id = ?');
  }

  /** Creates a token and returns its value; only the digest is kept. */
  create(comment = ''): { id: number; token: string } {
    const token = TOKEN_PREFIX[this.scope] + randomBytes(32).toString('hex');
    const result = this.db
      .prepare('INSERT INTO admin_tokens (digest, comment, scope, created_at) VALUES (?, ?, ?, ?)')
      .run(tokenDigest(token), comment, this.scope, this.clock.now().toISOString());
    return { id: Number(result.lastInsertRowid), token };
  }

  /** The id of the token when it is valid in this scope (lookup by digest, so no comparison of secrets happens), else null. */
  verify(token: string): number | null {
    if (!token.startsWith(TOKEN_PREFIX[this.scope]) || token.length > 200) return null;
    const row = this.findStmt.get(tokenDigest(token), this.scope) as { id: number } | undefined;
    if (!row) return null;
    const now = this.clock.now().getTime();
    if ((this.touched.get(row.id) ?? 0) < now - 60_000) {
      this.touched.set(row.id, now);
      this.touchStmt.run(new Date(now).toISOString(), row.id);
    }
    return row.id;
  }

  list(): AdminTokenSummary[] {
    return this.db
      .prepare('SELECT id, comment, created_at, last_used_at FROM admin_tokens WHERE scope = ? ORDER BY id')
      .all(this.scope) as AdminTokenSummary[];
  }

  /** Deletes a token of this scope; true when it existed. */
  delete(id: number): boolean {
    return this.db.prepare('DELETE FROM admin_tokens WHERE id = ? AND scope = ?').run(id, this.scope).changes > 0;
  }
}
