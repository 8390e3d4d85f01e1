// Values derived from the store (a read, a rendered page), each kept under the store's change mark taken before it was
// read, and answered only while the store's current mark is still that one: nothing was written since, by anyone.

/**
 * A bounded map of values valid at one change mark (`QueryStore.changeMark`). Marks never come back once the store
 * changed (SQLite's data version and change count only grow), so the first lookup at a new mark drops every entry.
 *
 * Usage: take the mark, `get(mark, key)`; on a miss read (and render) with that same mark in hand, then
 * `set(mark, key, value)`. A value read after its mark was taken is served only while the current mark equals it, that
 * is while nothing was written since the mark — so it is what the same read would answer now.
 */
export class MarkedCache<T> {
  private mark: string | undefined;
  private readonly entries = new Map<string, T>();

  /** At most `limit` entries (the oldest goes first). */
  constructor(private readonly limit = 10_000) {}

  /** The value kept for `key` at `mark`; undefined when there is none (or when the store has no mark). */
  get(mark: string | undefined, key: string): T | undefined {
    if (mark === undefined) return undefined;
    if (mark !== this.mark) {
      this.entries.clear();
      this.mark = mark;
      return undefined;
    }
    return this.entries.get(key);
  }

  /** Keeps `value`, read after `mark` was taken, for `key`; dropped when the store's mark has moved on since. */
  set(mark: string | undefined, key: string, value: T): void {
    if (mark === undefined || mark !== this.mark) return;
    if (this.entries.size >= this.limit && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  /** How many entries are kept (tests). */
  get size(): number {
    return this.entries.size;
  }
}

/**
 * `read()`'s answer for `key`, reused while the store is unchanged since it was read (`MarkedCache`); `mark` is the
 * store's change mark taken before the call (`QueryStore.changeMark`). Null answers are not kept. Without a mark
 * (PostgreSQL) every call reads.
 */
export async function markedRead<T extends object>(mark: string | undefined, cache: MarkedCache<T>, key: string, read: () => Promise<T | null>): Promise<T | null> {
  const kept = cache.get(mark, key);
  if (kept) return kept;
  const value = await read();
  if (value) cache.set(mark, key, value);
  return value;
}
