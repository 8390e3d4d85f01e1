// Server-side web sessions (scope `sessions`): a cookie holds a random id, the database holds its SHA-256 digest, who it
// belongs to and when it was made and last used. Every request reads the row, so ending a session (logout) or all of a
// person's sessions (password change or reset, role change, deletion) takes effect at once, in every platform process.
import { createHash, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../../panel/shared/clock.ts';
import type { Db } from '../store/db.ts';
import type { Migration } from '../store/migrator.ts';
import { statement } from '../store/statement-cache.ts';

export const SESSIONS_SCOPE = 'sessions';

export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'web-sessions',
    // The per-person `session_version` columns of platform scope 4 ended sessions only on a password change, and a
    // cookie carrying the right version could not be ended alone (logout only cleared it in the browser): the
    // records replace them.
    up: `
      CREATE TABLE web_sessions (
        digest TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('admin', 'customer')),
        subject TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX web_sessions_subject ON web_sessions (kind, subject);
      ALTER TABLE admin_users DROP COLUMN session_version;
      ALTER TABLE customers DROP COLUMN session_version;
    `,
  },
];

/** Who a session belongs to: an admin (id) or a customer (uuid). */
export type SessionKind = 'admin' | 'customer';

export interface SessionPolicy {
  /** A session unused this long is over (default 30 min). */
  idleMs: number;
  /** A session is over this long after login, used or not (default 12 h). */
  absoluteMs: number;
  /** Last use is written at most this often per session (default 1 min): the idle limit is exact to this much. */
  touchMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000, touchMs: 60_000 };

interface SessionRow {
  kind: SessionKind;
  subject: string;
  seen_at: number;
  expires_at: number;
}

/** Longest cookie value looked up (a real one is 43 characters). */
const MAX_ID_LENGTH = 128;

function digestOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** The `web_sessions` table: start, read (idle and absolute expiry, last use), end one, end all of a person. */
export class SessionStore {
  constructor(private readonly db: Db, private readonly clock: Clock = systemClock, readonly policy: SessionPolicy = DEFAULT_SESSION_POLICY) {}

  /** Starts a session of `subject` and answers the cookie value (32 random bytes); expired sessions are dropped. */
  start(kind: SessionKind, subject: string): string {
    const now = this.clock.now().getTime();
    const id = randomBytes(32).toString('base64url');
    statement(this.db, 'DELETE FROM web_sessions WHERE expires_at <= ? OR seen_at <= ?').run(now, now - this.policy.idleMs);
    statement(this.db, 'INSERT INTO web_sessions (digest, kind, subject, created_at, seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(digestOf(id), kind, subject, now, now, now + this.policy.absoluteMs);
    return id;
  }

  /** The subject of a live session of `kind` with cookie value `id`, else null (unknown, ended, idle too long, too old). */
  read(id: string | undefined, kind: SessionKind): string | null {
    if (!id || id.length > MAX_ID_LENGTH) return null;
    const digest = digestOf(id);
    const row = statement(this.db, 'SELECT kind, subject, seen_at, expires_at FROM web_sessions WHERE digest = ?').get(digest) as SessionRow | undefined;
    if (!row || row.kind !== kind) return null;
    const now = this.clock.now().getTime();
    if (now >= row.expires_at || now - row.seen_at >= this.policy.idleMs) {
      statement(this.db, 'DELETE FROM web_sessions WHERE digest = ?').run(digest);
      return null;
    }
    if (now - row.seen_at >= this.policy.touchMs) statement(this.db, 'UPDATE web_sessions SET seen_at = ? WHERE digest = ? AND seen_at < ?').run(now, digest, now);
    return row.subject;
  }

  /** Ends the session with cookie value `id` (logout); false when there was none. */
  end(id: string | undefined): boolean {
    if (!id || id.length > MAX_ID_LENGTH) return false;
    return statement(this.db, 'DELETE FROM web_sessions WHERE digest = ?').run(digestOf(id)).changes > 0;
  }

  /** Ends every session of `subject`; answers how many there were. */
  endAll(kind: SessionKind, subject: string): number {
    return statement(this.db, 'DELETE FROM web_sessions WHERE kind = ? AND subject = ?').run(kind, subject).changes;
  }
}
