// A pg Client that runs parameterised queries as named prepared statements: PostgreSQL then parses, analyses and (once
// it settles on a generic plan) plans each SQL text once per connection instead of on every execution — most of the
// server's CPU on the small indexed statements the platform sends.
import pg from 'pg';

/** Distinct SQL texts given a statement name per process; past it (e.g. `IN (…)` lists of many lengths) texts run unnamed. */
const NAMED_LIMIT = 2000;

/** SQLSTATE of "cached plan must not change result type": a table a prepared `SELECT *` reads changed its columns. */
const PLAN_CHANGED = '0A000';

/** Statement name per SQL text (shared by every connection: pg prepares a name on each connection at its first use). */
const names = new Map<string, string>();
/** Texts whose prepared form failed with PLAN_CHANGED: they run unnamed from then on. */
const unnamed = new Set<string>();

function nameOf(text: string): string | undefined {
  if (unnamed.has(text)) return undefined;
  let name = names.get(text);
  if (name === undefined && names.size < NAMED_LIMIT) {
    name = `vpnhost_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

type QueryArgs = Parameters<pg.Client['query']>;

/**
 * `query(text, values)` with at least one value runs as the named statement of its text (what Kysely sends); any other
 * form (raw text, a config object, a cursor) goes to pg unchanged. A prepared `SELECT *` whose table gained or lost
 * columns since (a migration by another process) fails with PLAN_CHANGED: its text then runs unnamed, and the query is
 * run again unnamed unless a transaction is open on this connection (there the error has aborted it, as any error).
 */
export class PreparingClient extends pg.Client {
  /** True between a `BEGIN` and its `COMMIT`/`ROLLBACK` sent through this client as text (Kysely's and the migrator's). */
  private inTransaction = false;

  override query(...args: unknown[]): never {
    const [text, values] = args;
    if (typeof text === 'string') {
      const bound = args.length === 2 && Array.isArray(values) && values.length > 0;
      const name = bound ? nameOf(text) : undefined;
      if (name !== undefined) return this.named(name, text, values as unknown[]) as never;
      if (!bound) this.track(text);
    }
    return (super.query as (...a: unknown[]) => unknown)(...(args as QueryArgs)) as never;
  }

  private async named(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.submitNamed(name, text, values);
    } catch (error) {
      if ((error as { code?: unknown }).code !== PLAN_CHANGED) throw error;
      unnamed.add(text);
      if (this.inTransaction) throw error;
      return super.query(text, values);
    }
  }

  /**
   * Runs `text` as statement `name`: a Query built from the text (pg copies a config object property by property on every
   * query, which costs more than the rest of its work), named, and submitted.
   */
  private submitNamed(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const query = new pg.Query(text, values, (error: Error | undefined, result: pg.QueryResult) => (error ? reject(error) : resolve(result)));
      (query as unknown as { name: string }).name = name;
      super.query(query);
    });
  }

  private track(text: string): void {
    const command = text.trimStart().slice(0, 8).toLowerCase();
    if (command.startsWith('begin') || command.startsWith('start')) this.inTransaction = true;
    else if (command.startsWith('commit') || command.startsWith('end') || (command.startsWith('rollback') && !/^\s*rollback\s+to\b/i.test(text))) {
      this.inTransaction = false;
    }
  }
}
