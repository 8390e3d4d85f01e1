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

/** What pg's Result keeps of a row description: the fields, a parser per field and the empty row it copies per row. */
interface RowShape {
  fields: pg.FieldDef[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: Record<string, null> | null;
}

/** pg's Result class (exported by pg, not in its typings), as far as this client drives it. */
const PgResult = (pg as unknown as { Result: new (rowMode: undefined, types: unknown) => RowShape & { addFields(fields: pg.FieldDef[]): void } }).Result;

/** The same columns, in the same order, of the same types and formats. */
function sameFields(a: readonly pg.FieldDef[], b: readonly pg.FieldDef[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID || a[i]!.format !== b[i]!.format) return false;
  }
  return true;
}

/**
 * A Result that takes a named statement's row description as it was last seen on this connection (its parsers and empty
 * row) instead of building them again on every execution (pg receives the description with each run of a prepared
 * statement); a description that differs (a changed table) is built as pg builds it and kept instead.
 */
class RememberingResult extends PgResult {
  constructor(private readonly shapes: Map<string, RowShape>, private readonly statement: string, types: unknown) {
    super(undefined, types);
  }

  override addFields(fields: pg.FieldDef[]): void {
    const known = this.shapes.get(this.statement);
    if (known && sameFields(known.fields, fields)) {
      this.fields = fields;
      this._parsers = known._parsers;
      this._prebuiltEmptyResultObject = known._prebuiltEmptyResultObject;
      return;
    }
    super.addFields(fields);
    this.shapes.set(this.statement, { fields, _parsers: this._parsers, _prebuiltEmptyResultObject: this._prebuiltEmptyResultObject });
  }
}

/**
 * `query(text, values)` with at least one value runs as the named statement of its text (what Kysely sends); any other
 * form (raw text, a config object, a cursor) goes to pg unchanged. A prepared `SELECT *` whose table gained or lost
 * columns since (a migration by another process) fails with PLAN_CHANGED: its text then runs unnamed, and the query is
 * run again unnamed unless a transaction is open on this connection (there the error has aborted it, as any error).
 */
export class PreparingClient extends pg.Client {
  /** True between a `BEGIN` and its `COMMIT`/`ROLLBACK` sent through this client as text (Kysely's and the migrator's). */
  private inTransaction = false;
  /** Row descriptions of the named statements run on this connection (rememberingResult). */
  private readonly shapes = new Map<string, RowShape>();

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
      const internals = query as unknown as { name: string; _result: pg.Result; _results: pg.Result };
      internals.name = name;
      internals._result = internals._results = new RememberingResult(this.shapes, name, (this as unknown as { _types: unknown })._types) as unknown as pg.Result;
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
