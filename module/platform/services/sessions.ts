// Server-side web sessions (scope `sessions`): a cookie holds a random id, the database holds its SHA-256 digest, who it
// belongs to and when it was made and last used. Every request reads the row, so ending a session (logout) or all of a
// person's sessions (password change or reset, role change, deletion) takes effect at once, in every platform process.
import { hash, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../../shared/clock.ts';
import type { Migration } from '../store/migrator.ts';
import type { QueryStore } from '../store/query/query-store.ts';

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
  {
    version: 2,
    name: 'login-throttle',
    // The failed-login counts were kept in each process's memory: several processes behind a proxy each allowed the
    // full count. One row per failure (pruned past the window) and one per locked key, shared by every process.
    up: `
      CREATE TABLE login_failures (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE INDEX login_failures_key ON login_failures (key, at);
      CREATE INDEX login_failures_at ON login_failures (at);
      CREATE TABLE login_locks (
        key TEXT PRIMARY KEY,
        locked_until INTEGER NOT NULL
      );
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

/** Longest cookie value looked up (a real one is 43 characters). */
export const MAX_ID_LENGTH = 128;

/** What `web_sessions` keys a session by: the SHA-256 digest of its cookie value. */
export function digestOf(id: string): string {
  return hash('sha256', id, 'base64url');
}

/**
 * The `web_sessions` table: start, read (idle and absolute expiry, last use), end one, end all of a person. Holds no
 * state of its own, so any platform process reads the sessions any other one started; `within(tx)` joins a
 * transaction (a password change ends the sessions in the same commit).
 */
export class SessionStore {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock, readonly policy: SessionPolicy = DEFAULT_SESSION_POLICY) {}

  /** The same sessions on `tx` (a store handed out by `QueryStore.transaction`). */
  within(tx: QueryStore): SessionStore {
    return new SessionStore(tx, this.clock, this.policy);
  }

  /** Starts a session of `subject` and answers the cookie value (32 random bytes); expired sessions are dropped. */
  async start(kind: SessionKind, subject: string): Promise<string> {
    const now = this.clock.now().getTime();
    const id = randomBytes(32).toString('base64url');
    await this.store.db.deleteFrom('web_sessions').where((eb) => eb.or([eb('expires_at', '<=', now), eb('seen_at', '<=', now - this.policy.idleMs)])).execute();
    await this.store.db.insertInto('web_sessions')
      .values({ digest: digestOf(id), kind, subject, created_at: now, seen_at: now, expires_at: now + this.policy.absoluteMs }).execute();
    return id;
  }

  /** The subject of a live session of `kind` with cookie value `id`, else null (unknown, ended, idle too long, too old). */
  async read(id: string | undefined, kind: SessionKind): Promise<string | null> {
    if (!id || id.length > MAX_ID_LENGTH) return null;
    const digest = digestOf(id);
    const row = await this.store.db.selectFrom('web_sessions').select(['kind', 'subject', 'seen_at', 'expires_at']).where('digest', '=', digest).executeTakeFirst();
    if (!row || row.kind !== kind) return null;
    const now = this.clock.now().getTime();
    if (now >= Number(row.expires_at) || now - Number(row.seen_at) >= this.policy.idleMs) {
      await this.store.db.deleteFrom('web_sessions').where('digest', '=', digest).execute();
      return null;
    }
    if (now - Number(row.seen_at) >= this.policy.touchMs) {
      await this.store.db.updateTable('web_sessions').set({ seen_at: now }).where('digest', '=', digest).where('seen_at', '<', now).execute();
    }
    return row.subject;
  }

  /** Ends the session with cookie value `id` (logout); false when there was none. */
  async end(id: string | undefined): Promise<boolean> {
    if (!id || id.length > MAX_ID_LENGTH) return false;
    const result = await this.store.db.deleteFrom('web_sessions').where('digest', '=', digestOf(id)).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Ends every session of `subject`; answers how many there were. */
  async endAll(kind: SessionKind, subject: string): Promise<number> {
    const result = await this.store.db.deleteFrom('web_sessions').where('kind', '=', kind).where('subject', '=', subject).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
