// The public-key index of accounts GET /wireguard/online matches live peers against, kept current by the store's feed.
import type { AccountListingRows, OnlineIndexTuple } from '../store/repositories/account-listing-rows.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';

/** Above this many changed accounts since the last read, the index is rebuilt instead of patched. */
const PATCH_LIMIT = 2000;

/**
 * Public key → account tuple of every account, built once and then patched: the accounts repository reports each
 * written row (its id) or a bulk change (`null`); the next read re-reads just the written ids (one statement) or,
 * after a bulk change or many writes, everything (one statement). A listing of 50,000 online peers thus costs map
 * lookups instead of reading 50,000 rows.
 */
export class OnlineIndex {
  private byKey: Map<string, OnlineIndexTuple> | null = null;
  private keyById = new Map<number, string>();
  private dirty = new Set<number>();
  private stale = true;

  private readonly reads: AccountListingRows;

  constructor(accounts: AccountsRepository) {
    this.reads = accounts.listingReads();
    accounts.onRowsChanged((id) => {
      if (id === null || this.dirty.size >= PATCH_LIMIT) this.stale = true;
      else this.dirty.add(id);
    });
  }

  /** The account whose peer has `publicKey`, or undefined. */
  get(publicKey: string): OnlineIndexTuple | undefined {
    return this.current().get(publicKey);
  }

  private current(): Map<string, OnlineIndexTuple> {
    if (this.stale || !this.byKey) return this.rebuild();
    if (this.dirty.size > 0) this.patch();
    return this.byKey;
  }

  private rebuild(): Map<string, OnlineIndexTuple> {
    const byKey = new Map<string, OnlineIndexTuple>();
    const keyById = new Map<number, string>();
    for (const row of this.reads.online(null)) {
      byKey.set(row[2], row);
      keyById.set(row[0], row[2]);
    }
    this.byKey = byKey;
    this.keyById = keyById;
    this.dirty.clear();
    this.stale = false;
    return byKey;
  }

  private patch(): void {
    const ids = [...this.dirty];
    this.dirty.clear();
    const byKey = this.byKey!;
    for (const id of ids) {
      const key = this.keyById.get(id);
      if (key !== undefined) byKey.delete(key);
      this.keyById.delete(id);
    }
    for (const row of this.reads.online(ids)) {
      byKey.set(row[2], row);
      this.keyById.set(row[0], row[2]);
    }
  }
}
