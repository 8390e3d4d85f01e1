// One-time links: made for an account, listed while live, consumed once atomically, downloads for a grace period, revoked.
import { type Clock } from '../../../shared/clock.ts';
import { createHash, randomBytes } from 'node:crypto';
import { ApiError, OWN } from '../../http/errors.ts';
import type { OtlList } from '../../../shared/wire/otl.ts';
import type { OtlLinksRepository } from '../../store/repositories/otl-links.ts';

/** Bytes of a link key (shown as 80 hex characters, like an access hash). */
const OTL_KEY_BYTES = 40;
/** Bytes of a consuming view's download token. */
const OTL_VIEW_BYTES = 32;
/** How long the downloads of the consuming view keep working after it (ms): 10 minutes. */
export const OTL_DOWNLOAD_GRACE_MS = 10 * 60_000;

const DAY_MS = 86_400_000;
const LINK_KEY = /^[0-9a-f]{80}$/;
const LISTED_KEY = /^[0-9a-f]{64}$/;

/** SHA-256 hex of a key or token: what is stored in place of it. */
export function otlDigest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** What the links service needs besides its repository. */
export interface OtlLinkDeps {
  links: OtlLinksRepository;
  clock: Clock;
  /** `{base_url}` without a trailing slash, read when a link is made. */
  baseUrl: () => string;
  /** The link lifetime in days (page setting `lifetime`), read when a link is made. */
  lifetimeDays: () => number;
  /** The id of an account by name, or `Account not found`. */
  accountId: (name: string) => number;
}

/** A consumed link: its account and the token of this view's downloads. */
export interface OtlView {
  accountId: number;
  /** 64 hex characters; valid for {@link OTL_DOWNLOAD_GRACE_MS} after the view. */
  token: string;
}

/** Link lifecycle. Keys never touch the store: only their SHA-256 digest does. */
export class OtlLinkService {
  constructor(private readonly deps: OtlLinkDeps) {}

  /**
   * GET /account/<name>/otl: a new link `{base_url}/otl/<key>` (key: 40 random bytes as hex) expiring `lifetime`
   * days from now. Dead links (expired, or used and past the grace period) are purged first.
   */
  create(accountName: string): string {
    const accountId = this.deps.accountId(accountName);
    const now = this.deps.clock.now();
    const key = randomBytes(OTL_KEY_BYTES).toString('hex');
    const expires = new Date(now.getTime() + this.deps.lifetimeDays() * DAY_MS);
    this.deps.links.purge(now.toISOString());
    this.deps.links.insert(otlDigest(key), accountId, now.toISOString(), expires.toISOString());
    return `${this.deps.baseUrl().replace(/\/+$/, '')}/otl/${key}`;
  }

  /**
   * GET /otl/list: links neither used nor expired, keyed by the key's SHA-256 digest (the link key itself is not
   * stored); `created_data` and `lifetime` (the expiry) as UTC dates `YYYY-MM-DD`.
   */
  list(): OtlList {
    const olts: OtlList['olts'] = {};
    for (const row of this.deps.links.live(this.deps.clock.now().toISOString())) {
      olts[row.digest] = { account: row.account, created_data: row.created_at.slice(0, 10), key: row.digest, lifetime: row.expires_at.slice(0, 10) };
    }
    return { olts };
  }

  /** DELETE /otl/<key>: revokes a link given as its listed digest or as the link key; `One-time link not found` else. */
  revoke(key: string): void {
    const digest = LINK_KEY.test(key) ? otlDigest(key) : LISTED_KEY.test(key) ? key : null;
    if (digest === null || !this.deps.links.delete(digest)) throw new ApiError(OWN.OTL_NOT_FOUND);
  }

  /** Deletes every link of an account (the account was disabled). */
  killForAccount(accountId: number): void {
    this.deps.links.deleteForAccount(accountId);
  }

  /** The name of the account with this id, or null when it is gone. */
  accountName(accountId: number): string | null {
    return this.deps.links.accountName(accountId);
  }

  /** Whether `key` opens a link that has not been used, has not expired and whose account is enabled (no change). */
  isLive(key: string): boolean {
    return this.deps.links.isLive(otlDigest(key), this.deps.clock.now().toISOString());
  }

  /**
   * Consumes the link of `key` in one UPDATE ... WHERE used_at IS NULL: of any number of simultaneous calls at
   * most one gets the view; unknown, used and expired keys (and disabled accounts) all answer null after the same
   * one statement.
   */
  consume(key: string): OtlView | null {
    const now = this.deps.clock.now();
    const token = randomBytes(OTL_VIEW_BYTES).toString('hex');
    const grace = new Date(now.getTime() + OTL_DOWNLOAD_GRACE_MS).toISOString();
    const ref = this.deps.links.consume(otlDigest(key), now.toISOString(), otlDigest(token), grace);
    return ref ? { accountId: ref.account_id, token } : null;
  }

  /** The account whose consuming view issued `token` for `key`, while its grace period lasts; else null. */
  download(key: string, token: string): number | null {
    return this.deps.links.download(otlDigest(key), otlDigest(token), this.deps.clock.now().toISOString())?.account_id ?? null;
  }
}

