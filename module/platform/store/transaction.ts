// Runs multi-step writes atomically in one better-sqlite3 transaction (nested calls become savepoints); for a module's
// own stores (its manifest's services get the platform database), per the spec's guidance on multi-step writes.
import type Database from 'better-sqlite3';

/**
 * Runs `fn` inside a transaction: committed when it returns, rolled back when it throws. better-sqlite3
 * transactions are synchronous, so `fn` must not return a promise (that would commit before the work is done).
 * `immediate` takes the write lock at BEGIN (waiting up to the busy timeout): use it when the transaction reads before it
 * writes and other processes write the same file, where a deferred one would fail with SQLITE_BUSY on its first write.
 */
export function transaction<T>(db: Database.Database, fn: () => T, mode: 'deferred' | 'immediate' = 'deferred'): T {
  const run = db.transaction(() => {
    const value = fn();
    if (value && typeof (value as { then?: unknown }).then === 'function') {
      throw new TypeError('transaction(): the callback must be synchronous');
    }
    return value;
  });
  return mode === 'immediate' && !db.inTransaction ? run.immediate() : run();
}
