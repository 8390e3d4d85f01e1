// A read whose SQL is built and compiled once: Kysely builds and compiles a query on every execution (operation-node
// trees, frozen copies, the compiler's visit), which costs several times what a small indexed read does on SQLite. A
// page's per-request reads take one key; the query is compiled with a marker in the key's place and run with the key
// substituted among the compiled parameters.
import type { CompiledQuery, Compilable, QueryResult } from 'kysely';

/** What a read runs on: a store's `db` (or a transaction's). */
export interface QueryRunner {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/** The marker standing for the key in the compiled parameters (never a real key: it holds NUL characters). */
const KEY = '\u0000compiled-read-key\u0000';

/** One read of rows `R` by one text key, compiled on first use for the store (`db`) it runs on. */
export class CompiledRead<R> {
  private compiled: CompiledQuery<R> | null = null;
  private keyAt: number[] = [];

  /** `build(key)` must return the same query for every key, using `key` only as a bound value. */
  constructor(private readonly db: QueryRunner, private readonly build: (key: string) => Compilable<R>) {}

  /** The rows of the read for `key`. */
  async rows(key: string): Promise<R[]> {
    const compiled = this.compiled ?? this.compile();
    const parameters = compiled.parameters.slice();
    for (const at of this.keyAt) parameters[at] = key;
    return (await this.db.executeQuery<R>({ ...compiled, parameters })).rows;
  }

  private compile(): CompiledQuery<R> {
    const compiled = this.build(KEY).compile();
    this.keyAt = compiled.parameters.flatMap((value, at) => (value === KEY ? [at] : []));
    if (this.keyAt.length === 0) throw new Error('a compiled read must bind its key');
    this.compiled = compiled;
    return compiled;
  }
}
