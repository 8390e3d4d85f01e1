// A read whose SQL is built and compiled once: Kysely builds and compiles a query on every execution (operation-node
// trees, frozen copies, the compiler's visit), which costs several times what a small indexed read does on SQLite. A
// page's per-request reads take one key; the query is compiled with a marker in the key's place and run with the key
// substituted among the compiled parameters. On SQLite outside a transaction it runs at once on the prepared statement
// (`QueryStore.readNow`); otherwise through the store's `db`, as any query.
import type { CompiledQuery, Compilable } from 'kysely';
import type { QueryStore } from '../query-store.ts';

/** The marker standing for the key in the compiled parameters (never a real key: it holds NUL characters). */
const KEY = '\u0000compiled-read-key\u0000';

/** One read of rows `R` by one text key, compiled on first use for the store (`db`) it runs on. */
export class CompiledRead<R> {
  private compiled: CompiledQuery<R> | null = null;
  private keyAt: number[] = [];

  /**
   * A read on `store` (a transaction's store reads inside its transaction); `build(key)` must return the same query for
   * every key, using `key` only as a bound value.
   */
  constructor(private readonly store: QueryStore, private readonly build: (key: string) => Compilable<R>) {}

  /** The rows of the read for `key`. */
  async rows(key: string): Promise<R[]> {
    const compiled = this.compiled ?? this.compile();
    const parameters = compiled.parameters.slice();
    for (const at of this.keyAt) parameters[at] = key;
    const query: CompiledQuery<R> = { ...compiled, parameters };
    return this.store.readNow(query) ?? (await this.store.db.executeQuery<R>(query)).rows;
  }

  private compile(): CompiledQuery<R> {
    const compiled = this.build(KEY).compile();
    this.keyAt = compiled.parameters.flatMap((value, at) => (value === KEY ? [at] : []));
    if (this.keyAt.length === 0) throw new Error('a compiled read must bind its key');
    this.compiled = compiled;
    return compiled;
  }
}
