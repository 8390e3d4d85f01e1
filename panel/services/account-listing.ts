// The account listings as JSON text built from per-account fragments kept between requests (GET /account, peers).
import type { Account } from '../schemas/account.ts';
import type { ListingPage } from '../schemas/listing.ts';
import type { SecretBox } from '../shared/secret-box.ts';
import type { AccountListingRows, IdListingRow } from '../store/repositories/account-listing-rows.ts';
import { formatIpv4 } from './addressing.ts';

/** Collaborators of {@link AccountListing}. */
export interface AccountListingDeps {
  rows: AccountListingRows;
  box: SecretBox;
}

/** One cached account: its wire object as JSON text, and its name as a JSON string (the key of keyed listings). */
interface Fragment {
  json: string;
  key: string;
}

/**
 * Builds the listings' JSON without per-row work for accounts that did not change: each account's wire object is
 * serialised once (secrets opened once) and kept as text until the account changes; a listing reads the ids in
 * order (one statement of integers), fetches the rows it has no fragment for (one statement), and joins text.
 * At 50,000 accounts a repeated GET /account is then about one JSON.stringify of the array; the first one opens
 * every sealed secret (two AES-GCM opens per account).
 *
 * The store's account writes must call {@link forget} (the AccountsRepository's change feed does): a fragment is
 * dropped when its row is written, every fragment when a bulk write or a restore replaced rows.
 */
export class AccountListing {
  private readonly fragments = new Map<number, Fragment>();

  constructor(private readonly deps: AccountListingDeps) {}

  /** Drops the fragment of account `id`, or every fragment (`null`). */
  forget(id: number | null): void {
    if (id === null) this.fragments.clear();
    else this.fragments.delete(id);
  }

  /** Number of accounts whose fragment is held (for tests and metrics). */
  get size(): number {
    return this.fragments.size;
  }

  /** GET /account: the JSON array of accounts in id order, narrowed by `page`. */
  arrayJson(page: ListingPage = {}): string {
    const parts = this.fragmentsOf(null, page);
    let out = '[';
    for (let i = 0; i < parts.length; i++) out += (i ? ',' : '') + parts[i].json;
    return `${out}]`;
  }

  /** GET /wireguard/<name>/peers: the JSON object of one server's accounts keyed by name, narrowed by `page`. */
  objectJson(serverId: number, page: ListingPage = {}): string {
    const parts = this.fragmentsOf(serverId, page);
    let out = '{';
    for (let i = 0; i < parts.length; i++) out += `${i ? ',' : ''}${parts[i].key}:${parts[i].json}`;
    return `${out}}`;
  }

  /** The accounts as objects (internal callers and tests); the same values as the JSON listings. */
  list(page: ListingPage = {}): Account[] {
    return JSON.parse(this.arrayJson(page)) as Account[];
  }

  private fragmentsOf(serverId: number | null, page: ListingPage): Fragment[] {
    const ids = this.deps.rows.ids(serverId, page.limit ?? -1, page.offset ?? 0);
    const out: Array<Fragment | undefined> = new Array(ids.length);
    const missing: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const held = this.fragments.get(ids[i]);
      if (held) out[i] = held;
      else missing.push(ids[i]);
    }
    if (missing.length > 0) {
      const made = new Map<number, Fragment>();
      for (const row of this.deps.rows.rows(missing)) made.set(row[0], this.fragment(row));
      for (let i = 0; i < ids.length; i++) {
        if (out[i]) continue;
        const fragment = made.get(ids[i]);
        // Deleted between the two statements: nothing to list (both run on one connection, so only a concurrent
        // process could do this).
        if (fragment) this.fragments.set(ids[i], (out[i] = fragment));
      }
    }
    return out.filter((f): f is Fragment => f !== undefined);
  }

  private fragment(row: IdListingRow): Fragment {
    const [, name, username, password, status, wg_name, ip, down, up, mangle, privateKey, public_key] = row;
    const { box } = this.deps;
    const account: Account = {
      name, username, password: box.open(password), status, wg_name, allowed_IPs: formatIpv4(ip),
      b_download: String(down), b_upload: String(up), mangle: String(mangle),
      private_key: privateKey ? box.open(privateKey) : '', public_key,
    };
    return { json: JSON.stringify(account), key: JSON.stringify(name) };
  }
}
