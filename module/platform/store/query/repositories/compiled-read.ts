// A read by one text key whose SQL is built and compiled once (store-kernel/compiled-statement.ts): a page's
// per-request reads. On SQLite outside a transaction it runs at once on the prepared statement (`QueryStore.runNow`);
// otherwise through the store's `db`, as any query.
import type { Compilable } from 'kysely';
import { CompiledStatement } from '../../../../store-kernel/compiled-statement.ts';
import type { QueryStore } from '../query-store.ts';

/** One read of rows `R` by one text key, compiled on first use for the store (`db`) it runs on. */
export class CompiledRead<R> {
  private readonly statement: CompiledStatement<{ key: string }, R>;

  /**
   * A read on `store` (a transaction's store reads inside its transaction); `build(key)` must return the same query for
   * every key, using `key` only as a bound value.
   */
  constructor(private readonly store: QueryStore, build: (key: string) => Compilable<R>) {
    this.statement = new CompiledStatement((_, values) => build(values.key));
  }

  /** The rows of the read for `key`. */
  async rows(key: string): Promise<R[]> {
    return (await this.statement.execute(this.store, { key })).rows;
  }
}
