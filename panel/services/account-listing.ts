// The account listings as JSON text built from per-account fragments kept between requests (GET /account, peers).
import type { Account } from '../../shared/wire/account.ts';
import type { ListingPage } from '../schemas/listing.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { AccountListingRows, IdListingRow } from '../store/repositories/account-listing-rows.ts';
import { formatIpv4 } from './addressing.ts';
import { FragmentArena, type JsonBody } from './listing-fragments.ts';

/** Collaborators of {@link AccountListing}. */
export interface AccountListingDeps {
  rows: AccountListingRows;
  box: SecretBox;
}

/** Rows read and turned into fragments per statement while a listing fills in what it lacks (bounds the peak). */
const BUILD_BATCH = 1000;

/**
 * Builds the listings' JSON without per-row work for accounts that did not change: each account's wire object is
 * serialised once (secrets opened once) and kept as UTF-8 bytes (a {@link FragmentArena}) until the account changes;
 * a listing reads the ids in order (one statement of integers), fetches the rows it has no fragment for (one
 * statement per {@link BUILD_BATCH}), and is sent as chunks copied from the kept bytes. At 50,000 accounts a repeated
 * GET /account is then about one memory copy of 17 MB, with 64 KB in flight; the first one opens every sealed secret
 * (two AES-GCM opens per account).
 *
 * The store's account writes must call {@link forget} (the AccountsRepository's change feed does): a fragment is
 * dropped when its row is written, every fragment when a bulk write or a restore replaced rows.
 */
export class AccountListing {
  private readonly fragments = new FragmentArena();

  constructor(private readonly deps: AccountListingDeps) {}

  /** Drops the fragment of account `id`, or every fragment (`null`). */
  forget(id: number | null): void {
    if (id === null) this.fragments.clear();
    else this.fragments.forget(id);
  }

  /** Number of accounts whose fragment is held (for tests and metrics). */
  get size(): number {
    return this.fragments.size;
  }

  /** GET /account: the JSON array of accounts in id order, narrowed by `page`, between `open` and `close`. */
  arrayBody(page: ListingPage = {}, open = '', close = ''): JsonBody {
    return this.fragments.body(this.held(null, page), false, `${open}[`, `]${close}`);
  }

  /**
   * GET /wireguard/<name>/peers: the JSON object of one server's accounts keyed by name, narrowed by `page`, between
   * `open` and `close`.
   */
  objectBody(serverId: number, page: ListingPage = {}, open = '', close = ''): JsonBody {
    return this.fragments.body(this.held(serverId, page), true, `${open}{`, `}${close}`);
  }

  /** The accounts as objects (internal callers and tests); the same values as the JSON listings. */
  list(page: ListingPage = {}): Account[] {
    return JSON.parse(Buffer.concat([...this.arrayBody(page).chunks()]).toString('utf8')) as Account[];
  }

  /** The listed ids, in order, each with its fragment made. */
  private held(serverId: number | null, page: ListingPage): number[] {
    const ids = this.deps.rows.ids(serverId, page.limit ?? -1, page.offset ?? 0);
    const missing = ids.filter((id) => !this.fragments.has(id));
    for (let i = 0; i < missing.length; i += BUILD_BATCH) {
      // an id deleted between the two statements (only another process could) is absent here and left out
      for (const row of this.deps.rows.rows(missing.slice(i, i + BUILD_BATCH))) this.keep(row);
    }
    return ids;
  }

  private keep(row: IdListingRow): void {
    const [id, name, username, password, status, wg_name, ip, down, up, mangle, privateKey, public_key] = row;
    const { box } = this.deps;
    const account: Account = {
      name, username, password: box.open(password), status, wg_name, allowed_IPs: formatIpv4(ip),
      b_download: String(down), b_upload: String(up), mangle: String(mangle),
      private_key: privateKey ? box.open(privateKey) : '', public_key,
    };
    this.fragments.put(id, JSON.stringify(name), JSON.stringify(account));
  }
}
