// The bound on one-time links of the client area: a service has one live link (a new one revokes every earlier one of
// its account on the panel, the "VPN is ready" mail's included), one is made at a time, and at most `limit` per window.
// The count and the one-at-a-time claim live in the platform database, so every platform process sees them.
import type Database from 'better-sqlite3';
import { z } from 'zod';
import type { Clock } from '../../../../panel/shared/clock.ts';
import type { Migration } from '../../../platform/store/migrator.ts';
import type { PanelClient } from './panel-client.ts';

/** Scope `module:Product/VpnProduct` v3: when each client-area link was asked for, per service, and whether it is still being made (no key is kept). */
export const LINK_ISSUES_MIGRATION: Migration = {
  version: 3,
  name: 'otl-issues',
  up: `CREATE TABLE vpn_product_otl_issues (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      service_uuid TEXT NOT NULL,
      issued_at INTEGER NOT NULL,
      pending INTEGER NOT NULL DEFAULT 1 CHECK (pending IN (0, 1))
    );
    CREATE INDEX vpn_product_otl_issues_service ON vpn_product_otl_issues (service_uuid, issued_at);`,
};

/** Config `otl_links`: how many new one-time links a service may get per window (defaults: 5 per 15 minutes). */
export const linkBoundSchema = z.object({
  limit: z.number().int().min(1).max(100).default(5),
  window_minutes: z.number().int().min(1).max(1440).default(15),
});
export type LinkBound = z.infer<typeof linkBoundSchema>;
export const DEFAULT_LINK_BOUND: LinkBound = { limit: 5, window_minutes: 15 };

/** The customer's answer when the bound is reached. */
export const LINK_LIMIT_REACHED = (bound: LinkBound, waitMinutes: number) =>
  `You can create ${bound.limit} one-time links for this service every ${bound.window_minutes} minutes. ` +
  `Try again in ${waitMinutes} minute${waitMinutes === 1 ? '' : 's'}; your newest link works until it is used or expires.`;

/** The customer's answer while another link of the service is being made (a second click, a script). */
export const LINK_BUSY = 'A one-time link for this service is being made right now: try again in a few seconds.';

/** A link still marked as being made after this long is taken as done (its process stopped). */
const PENDING_MS = 60_000;

/** Shown with a new link. */
export const LINK_REPLACES = 'It replaces every earlier one-time link of this service: those no longer work.';

/** The issue times of client-area links, per service (platform process only). */
export class LinkIssueLog {
  constructor(private readonly db: Database.Database, private readonly clock: Clock) {}

  /**
   * Claims the making of a new link of `serviceUuid`: refused while another is being made (`busy`) or when `bound.limit`
   * were asked for in the window (`retryAfterMs`: until the oldest leaves it). One write transaction, so concurrent
   * requests of any process are counted and serialized; `finish(id)` ends the claim.
   */
  take(serviceUuid: string, bound: LinkBound): { ok: true; id: number } | { ok: false; busy: boolean; retryAfterMs: number } {
    const windowMs = bound.window_minutes * 60_000;
    return this.db.transaction(() => {
      const now = this.clock.now().getTime();
      this.db.prepare('DELETE FROM vpn_product_otl_issues WHERE service_uuid = ? AND issued_at <= ?').run(serviceUuid, now - windowMs);
      const row = this.db.prepare(`SELECT COUNT(*) AS n, MIN(issued_at) AS oldest, MAX(CASE WHEN pending = 1 AND issued_at > ? THEN 1 ELSE 0 END) AS busy
          FROM vpn_product_otl_issues WHERE service_uuid = ?`).get(now - PENDING_MS, serviceUuid) as { n: number; oldest: number | null; busy: number | null };
      if (row.busy === 1) return { ok: false as const, busy: true, retryAfterMs: 2_000 };
      if (row.n >= bound.limit) return { ok: false as const, busy: false, retryAfterMs: Math.max(1, (row.oldest ?? now) + windowMs - now) };
      const id = this.db.prepare('INSERT INTO vpn_product_otl_issues (service_uuid, issued_at) VALUES (?, ?)').run(serviceUuid, now).lastInsertRowid;
      return { ok: true as const, id: Number(id) };
    }).immediate();
  }

  /** The link of claim `id` is made (or failed): the next one may be asked for. */
  finish(id: number): void {
    this.db.prepare('UPDATE vpn_product_otl_issues SET pending = 0 WHERE id = ?').run(id);
  }
}

/**
 * A new one-time link for `account` that is its only live one: the live links are listed first, the new one made, then
 * the listed ones revoked (so the customer gets a link even when a revocation fails; `failed` counts those).
 */
export async function replaceLink(client: PanelClient, account: string, signal?: AbortSignal): Promise<{ url: string; revoked: number; failed: number }> {
  const earlier = await client.liveLinkKeys(account, signal);
  const url = await client.oneTimeLink(account, signal);
  let revoked = 0;
  let failed = 0;
  for (const key of earlier) {
    try {
      if (await client.revokeLink(key, signal)) revoked++;
    } catch {
      failed++;
    }
  }
  return { url, revoked, failed };
}

/** What the client area's link action answers: the new link, or why none was made (429, with the wait). */
export type ClientLinkAnswer =
  | { made: true; url: string; revoked: number; failed: number }
  | { made: false; message: string; retryAfterS: number };

/**
 * The client area's "new one-time link" of a service: claimed in `issues` (refused while one is being made or past the
 * bound), made on the panel as the account's only live link, the claim ended whatever happens.
 */
export async function newClientLink(opts: {
  issues: LinkIssueLog; serviceUuid: string; bound: LinkBound; account: string; client: () => Promise<PanelClient>; signal?: AbortSignal;
}): Promise<ClientLinkAnswer> {
  const taken = opts.issues.take(opts.serviceUuid, opts.bound);
  if (!taken.ok) {
    const message = taken.busy ? LINK_BUSY : LINK_LIMIT_REACHED(opts.bound, Math.ceil(taken.retryAfterMs / 60_000));
    return { made: false, message, retryAfterS: Math.ceil(taken.retryAfterMs / 1000) };
  }
  try {
    return { made: true, ...(await replaceLink(await opts.client(), opts.account, opts.signal)) };
  } finally {
    opts.issues.finish(taken.id);
  }
}
