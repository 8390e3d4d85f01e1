// Prepared-statement access to `otl_links` (migration 009): one-time links stored by the SHA-256 digest of their key.
import type { Db } from '../db.ts';

/** A stored link. Times are ISO 8601 UTC strings (`toISOString`), which compare in time order as text. */
export interface OtlLinkRow {
  id: number;
  digest: string;
  account_id: number;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  view_digest: string | null;
  view_expires: string | null;
}

/** A live link with its account's name (GET /otl/list). */
export interface OtlListedRow {
  digest: string;
  account: string;
  created_at: string;
  expires_at: string;
}

/** What the consuming view or a download reads: the link's account id and whether that account is enabled. */
export interface OtlAccountRef {
  account_id: number;
}

/** Repository of one-time links. */
export class OtlLinksRepository {
  private readonly insertStmt;
  private readonly consumeStmt;
  private readonly downloadStmt;
  private readonly liveStmt;
  private readonly isLiveStmt;
  private readonly byDigestStmt;
  private readonly deleteStmt;
  private readonly deleteAccountStmt;
  private readonly purgeStmt;
  private readonly accountNameStmt;

  constructor(db: Db) {
    this.insertStmt = db.prepare<[string, number, string, string]>(
      'INSERT INTO otl_links (digest, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)');
    // The one statement that consumes a link: at most one caller ever sees a change (used_at IS NULL), and only for
    // a link still within its lifetime whose account is enabled.
    this.consumeStmt = db.prepare<{ digest: string; now: string; view: string; viewExpires: string }, OtlAccountRef>(
      `UPDATE otl_links SET used_at = @now, view_digest = @view, view_expires = @viewExpires
       WHERE digest = @digest AND used_at IS NULL AND expires_at > @now
         AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = otl_links.account_id AND a.status = 'enable')
       RETURNING account_id`);
    this.downloadStmt = db.prepare<{ digest: string; view: string; now: string }, OtlAccountRef>(
      `SELECT l.account_id FROM otl_links l JOIN accounts a ON a.id = l.account_id AND a.status = 'enable'
       WHERE l.digest = @digest AND l.view_digest = @view AND l.view_expires > @now`);
    this.liveStmt = db.prepare<[string], OtlListedRow>(
      `SELECT l.digest, a.name AS account, l.created_at, l.expires_at FROM otl_links l JOIN accounts a ON a.id = l.account_id
       WHERE l.used_at IS NULL AND l.expires_at > ? ORDER BY l.id`);
    this.isLiveStmt = db.prepare<{ digest: string; now: string }, { one: number }>(
      `SELECT 1 AS one FROM otl_links l JOIN accounts a ON a.id = l.account_id AND a.status = 'enable'
       WHERE l.digest = @digest AND l.used_at IS NULL AND l.expires_at > @now`);
    this.byDigestStmt = db.prepare<[string], OtlLinkRow>('SELECT * FROM otl_links WHERE digest = ?');
    this.deleteStmt = db.prepare<[string]>('DELETE FROM otl_links WHERE digest = ?');
    this.deleteAccountStmt = db.prepare<[number]>('DELETE FROM otl_links WHERE account_id = ?');
    this.accountNameStmt = db.prepare<[number], { name: string }>('SELECT name FROM accounts WHERE id = ?');
    this.purgeStmt = db.prepare<{ now: string }>(
      `DELETE FROM otl_links WHERE expires_at <= @now OR (used_at IS NOT NULL AND (view_expires IS NULL OR view_expires <= @now))`);
  }

  /** Stores a new link. */
  insert(digest: string, accountId: number, createdAt: string, expiresAt: string): void {
    this.insertStmt.run(digest, accountId, createdAt, expiresAt);
  }

  /**
   * Consumes the link atomically (one UPDATE ... WHERE used_at IS NULL): answers its account when this call used
   * it, null when it was unknown, used, expired or its account disabled. `view` is the download token's digest.
   */
  consume(digest: string, now: string, view: string, viewExpires: string): OtlAccountRef | null {
    return this.consumeStmt.get({ digest, now, view, viewExpires }) ?? null;
  }

  /** Whether the link would be consumed now (unused, unexpired, account enabled); reads only. */
  isLive(digest: string, now: string): boolean {
    return this.isLiveStmt.get({ digest, now }) !== undefined;
  }

  /** The account of a consumed link whose download token `view` (digest) is still within its grace period. */
  download(digest: string, view: string, now: string): OtlAccountRef | null {
    return this.downloadStmt.get({ digest, view, now }) ?? null;
  }

  /** Links neither used nor expired at `now`, oldest first, with their account's name. */
  live(now: string): OtlListedRow[] {
    return this.liveStmt.all(now);
  }

  /** One link by digest (any state), or undefined. */
  get(digest: string): OtlLinkRow | undefined {
    return this.byDigestStmt.get(digest);
  }

  /** Deletes one link; answers whether it existed. */
  delete(digest: string): boolean {
    return this.deleteStmt.run(digest).changes > 0;
  }

  /** Deletes every link of an account; answers how many. */
  deleteForAccount(accountId: number): number {
    return this.deleteAccountStmt.run(accountId).changes;
  }

  /** The name of the account with this id, or null. */
  accountName(accountId: number): string | null {
    return this.accountNameStmt.get(accountId)?.name ?? null;
  }

  /** Deletes expired links and used links whose download grace period is over; answers how many. */
  purge(now: string): number {
    return this.purgeStmt.run({ now }).changes;
  }
}
