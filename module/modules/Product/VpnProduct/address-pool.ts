// Hands out free peer addresses of a panel's WireGuard server from a cached `available_ips` list, so a burst of
// createJobs costs one list fetch, not one per job; processes start at random offsets to rarely collide.

interface Entry {
  free: string[];
  loading: Promise<void> | null;
}

/** Per-process cache of free addresses, keyed by `<location>/<server>`. */
export class AddressPool {
  private readonly entries = new Map<string, Entry>();
  /** Addresses handed out and not yet confirmed or released; kept out of refetched lists. */
  private readonly reserved = new Set<string>();

  /**
   * Takes a free address for `key`, calling `fetch` (GET available_ips) when the cached list is empty.
   * Throws `no free address on <server>` when the server has none.
   */
  async take(key: string, fetch: () => Promise<string[]>, server: string): Promise<string> {
    const entry = this.entry(key);
    for (let round = 0; round < 2; round++) {
      const ip = this.shift(key, entry);
      if (ip) return ip;
      if (!entry.loading) {
        entry.loading = fetch()
          .then((list) => {
            const fresh = list.filter((ip) => !this.reserved.has(`${key}|${ip}`));
            const start = fresh.length ? Math.floor(Math.random() * fresh.length) : 0;
            entry.free = fresh.slice(start).concat(fresh.slice(0, start));
          })
          .finally(() => {
            entry.loading = null;
          });
      }
      await entry.loading;
    }
    throw new Error(`no free address on ${server}`);
  }

  /** The panel took `ip` (account created) or refused it as in use: it leaves the reservation either way. */
  settle(key: string, ip: string): void {
    this.reserved.delete(`${key}|${ip}`);
  }

  /** The attempt failed for another reason: `ip` goes back to the front of the cached list. */
  release(key: string, ip: string): void {
    if (!this.reserved.delete(`${key}|${ip}`)) return;
    this.entries.get(key)?.free.unshift(ip);
  }

  /** Forgets the cached list (e.g. after an address was refused as in use by another process). */
  invalidate(key: string): void {
    const entry = this.entries.get(key);
    if (entry && !entry.loading) entry.free = [];
  }

  private shift(key: string, entry: Entry): string | undefined {
    const ip = entry.free.shift();
    if (ip) this.reserved.add(`${key}|${ip}`);
    return ip;
  }

  private entry(key: string): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { free: [], loading: null };
      this.entries.set(key, entry);
    }
    return entry;
  }
}
