// The bound on one-time links of the client area: a service has one live link (a new one revokes every earlier one of
// its account on the panel, the "VPN is ready" mail's included), one is made at a time, and at most `limit` per window.
// The count and the one-at-a-time claim live in the module's store, so every platform process sees them: the claim is
// a conditional write (one caller of any process gets it), the count is read and written only by the claim's holder.
import { randomUUID } from 'node:crypto';
import type { Generated } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../../../../shared/clock.ts';
import type { Migration } from '../../../platform/store/migrator.ts';
import type { ModuleStore } from '../../../platform/store/query/module-store.ts';
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

/** Scope `module:Product/VpnProduct` v5: per service, who is making its link right now (a claim taken by a conditional write). */
export const LINK_CLAIMS_MIGRATION: Migration = {
  version: 5,
  name: 'otl-claims',
  up: `CREATE TABLE vpn_product_otl_claims (
      service_uuid TEXT PRIMARY KEY,
      claimed_at INTEGER NOT NULL,
      token TEXT NOT NULL
    );`,
};

/** The link tables as the module store types them. */
export interface LinkTables {
  vpn_product_otl_issues: { id: Generated<number>; service_uuid: string; issued_at: number; pending: Generated<number> };
  vpn_product_otl_claims: { service_uuid: string; claimed_at: number; token: string };
}

/** A claim on making one service's link (`LinkIssueLog.take`), ended by `finish`. */
export interface LinkClaim {
  serviceUuid: string;
  token: string;
  /** The issue recorded for it. */
  id: number;
}

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
  constructor(private readonly store: ModuleStore<LinkTables>, private readonly clock: Clock) {}

  /**
   * Claims the making of a new link of `serviceUuid`: refused while another is being made (`busy`: the claim is held,
   * by any process) or when `bound.limit` were asked for in the window (`retryAfterMs`: until the oldest leaves it).
   * The claim is one conditional write, so of concurrent callers one gets it; `finish(claim)` ends it.
   */
  async take(serviceUuid: string, bound: LinkBound): Promise<{ ok: true; claim: LinkClaim } | { ok: false; busy: boolean; retryAfterMs: number }> {
    const windowMs = bound.window_minutes * 60_000;
    const now = this.clock.now().getTime();
    const token = randomUUID();
    const claimed = await this.store.db.insertInto('vpn_product_otl_claims').values({ service_uuid: serviceUuid, claimed_at: now, token })
      .onConflict((oc) => oc.column('service_uuid').doUpdateSet({ claimed_at: now, token }).where('vpn_product_otl_claims.claimed_at', '<=', now - PENDING_MS))
      .returning('token').executeTakeFirst();
    if (!claimed) return { ok: false, busy: true, retryAfterMs: 2_000 };
    const issues = this.store.db;
    await issues.deleteFrom('vpn_product_otl_issues').where('service_uuid', '=', serviceUuid).where('issued_at', '<=', now - windowMs).execute();
    const row = await issues.selectFrom('vpn_product_otl_issues').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('issued_at').as('oldest')])
      .where('service_uuid', '=', serviceUuid).executeTakeFirstOrThrow();
    if (Number(row.n) >= bound.limit) {
      await this.release(serviceUuid, token);
      return { ok: false, busy: false, retryAfterMs: Math.max(1, Number(row.oldest ?? now) + windowMs - now) };
    }
    const inserted = await issues.insertInto('vpn_product_otl_issues').values({ service_uuid: serviceUuid, issued_at: now }).returning('id').executeTakeFirstOrThrow();
    return { ok: true, claim: { serviceUuid, token, id: Number(inserted.id) } };
  }

  /** The link of `claim` is made (or failed): the next one may be asked for. */
  async finish(claim: LinkClaim): Promise<void> {
    await this.store.db.updateTable('vpn_product_otl_issues').set({ pending: 0 }).where('id', '=', claim.id).execute();
    await this.release(claim.serviceUuid, claim.token);
  }

  /** Ends the claim `token` holds (a claim taken over after PENDING_MS by another caller stays theirs). */
  private async release(serviceUuid: string, token: string): Promise<void> {
    await this.store.db.deleteFrom('vpn_product_otl_claims').where('service_uuid', '=', serviceUuid).where('token', '=', token).execute();
  }
}

/**
 * A new one-time link for `account` that is its only live one: the live links are listed first, the new one made, then
 * the listed ones revoked (so the customer gets a link even when a revocation fails; `failed` counts those).
 */
async function replaceLink(client: PanelClient, account: string, signal?: AbortSignal): Promise<{ url: string; revoked: number; failed: number }> {
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
  const taken = await opts.issues.take(opts.serviceUuid, opts.bound);
  if (!taken.ok) {
    const message = taken.busy ? LINK_BUSY : LINK_LIMIT_REACHED(opts.bound, Math.ceil(taken.retryAfterMs / 60_000));
    return { made: false, message, retryAfterS: Math.ceil(taken.retryAfterMs / 1000) };
  }
  try {
    return { made: true, ...(await replaceLink(await opts.client(), opts.account, opts.signal)) };
  } finally {
    await opts.issues.finish(taken.claim);
  }
}
