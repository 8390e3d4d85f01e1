// A statement built and compiled by Kysely once per engine, run with its values bound: Kysely builds an operation-node
// tree and compiles it on every execution, which on the task and service statements every provisioning runs costs more
// than SQLite takes to run them. The statement is built with a marker in each named value's place; a run substitutes the
// values among the compiled parameters.
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { StoreEngine } from './row-locks.ts';

/** A value bound into a compiled statement (never an array: `IN (…)` lists change the SQL text). */
type Bound = string | number | null;

/** The store a statement runs on: its engine (each has its own SQL text) and the Kysely (a transaction's joins it). */
export interface StatementStore {
  readonly engine: StoreEngine;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any database type holding the statement's tables
  readonly db: Kysely<any>;
  /** Runs a compiled statement at once when the store can (QueryStore.runNow on SQLite); undefined otherwise. */
  runNow?<R>(query: CompiledQuery<R>): QueryResult<R> | undefined;
}

/** Marks the place of value `name` (holds NUL characters: never a real value). */
const marker = (name: string): string => `\u0000bound:${name}\u0000`;

/** One compiled form: the query and, per parameter, the name of the value bound there (null: a constant of the SQL). */
interface Compiled<R> {
  query: CompiledQuery<R>;
  slots: Array<string | null>;
}

/**
 * One statement with values `P`, compiled per engine on first use. `build(store, values)` must build the same SQL for
 * any values, using each member of `values` only as a bound value (never in a condition of the code that builds it, nor
 * as a list; a value may be bound in several places); it may use `store.engine` (e.g. row locks).
 */
export class CompiledStatement<P extends Record<string, Bound>, R> {
  private readonly compiled = new Map<StoreEngine, Compiled<R>>();

  constructor(private readonly build: (store: StatementStore, values: P) => Compilable<R>) {}

  /** Runs the statement on `store` with `values` bound (outside a transaction on SQLite it runs at once). */
  async execute(store: StatementStore, values: P): Promise<QueryResult<R>> {
    const compiled = this.compiled.get(store.engine) ?? this.compile(store);
    const parameters = compiled.query.parameters.map((constant, at) => {
      const slot = compiled.slots[at];
      return slot === null ? constant : values[slot];
    });
    const query: CompiledQuery<R> = { ...compiled.query, parameters };
    return store.runNow?.(query) ?? store.db.executeQuery<R>(query);
  }

  /** The first row of the statement's result, if any. */
  async first(store: StatementStore, values: P): Promise<R | undefined> {
    return (await this.execute(store, values)).rows[0];
  }

  private compile(store: StatementStore): Compiled<R> {
    const names = new Map<string, string>();
    const markers = new Proxy({}, {
      get: (_, name) => {
        const text = marker(String(name));
        names.set(text, String(name));
        return text;
      },
    }) as P;
    const query = this.build(store, markers).compile();
    const slots = query.parameters.map((value) => (typeof value === 'string' ? names.get(value) ?? null : null));
    if (new Set(slots.filter((slot) => slot !== null)).size !== names.size) throw new Error('a compiled statement must bind every value it reads');
    const compiled = { query, slots };
    this.compiled.set(store.engine, compiled);
    return compiled;
  }
}

/**
 * A statement over a list of bound values (an `IN (…)` list, several rows), whose SQL text depends on the list's length:
 * one CompiledStatement per length, each built on first use. `build(count)` builds the statement for `count` values,
 * reading them as `values[`${prefix}${i}`]` (`listValues` names them so).
 */
export class CompiledListStatement<P extends Record<string, Bound>, R> {
  private readonly byCount = new Map<number, CompiledStatement<P & Record<string, string>, R>>();

  constructor(private readonly build: (count: number) => (store: StatementStore, values: P & Record<string, string>) => Compilable<R>) {}

  /** Runs the statement for `list`'s length on `store`, the list's values named by `prefix` and `values` bound. */
  execute(store: StatementStore, prefix: string, list: readonly string[], values: P): Promise<QueryResult<R>> {
    let statement = this.byCount.get(list.length);
    if (!statement) this.byCount.set(list.length, (statement = new CompiledStatement(this.build(list.length))));
    return statement.execute(store, { ...values, ...listValues(prefix, list) });
  }
}

/** `list`'s values named `${prefix}0`, `${prefix}1`, … (as a CompiledListStatement's build reads them). */
function listValues(prefix: string, list: readonly string[]): Record<string, string> {
  return Object.fromEntries(list.map((value, at) => [`${prefix}${at}`, value]));
}
