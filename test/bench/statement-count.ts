// Counts the SQL statements this process sends (pg's Client.query, better-sqlite3's Statement runs) by SQL text, so a
// bench can print statements per unit of work and the texts that make them up (BENCH_STATEMENTS=1).
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';

const counts = new Map<string, number>();
/** Time spent running SQLite statements (synchronous, so this is their cost in this process), by SQL text, in ms. */
const sqliteMs = new Map<string, number>();
let installed = false;

/** SQL text as counted: whitespace folded, `$n` / `?` parameter lists of any length shown once. */
function shape(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\((?:\s*(?:\$\d+|\?)\s*,)+\s*(?:\$\d+|\?)\s*\)/g, '(…)').trim();
}

function count(text: unknown): string {
  const key = typeof text === 'string' ? shape(text) : typeof text === 'object' && text && 'text' in text ? shape(String(text.text)) : '?';
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return key;
}

/** Starts counting (wraps pg and better-sqlite3 once per process). */
export function countStatements(): void {
  if (installed) return;
  installed = true;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    count(args[0]);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  const send = Redis.prototype.sendCommand as (...args: unknown[]) => unknown;
  Redis.prototype.sendCommand = function (this: Redis, ...args: unknown[]) {
    const command = args[0] as { name?: string; args?: unknown[] };
    count(`redis: ${command.name ?? '?'}${command.name === 'evalsha' ? ` ${String(command.args?.[0] ?? '').slice(0, 8)}` : ''}`);
    return send.apply(this, args);
  } as typeof Redis.prototype.sendCommand;
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown> & { source: string };
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate'] as const) {
    const original = statement[method];
    statement[method] = function (this: { source: string }, ...args: unknown[]) {
      const key = count(this.source);
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        sqliteMs.set(key, (sqliteMs.get(key) ?? 0) + performance.now() - started);
      }
    };
  }
}

/** The counts (and SQLite milliseconds, as `ms:<text>`) so far (a copy), by SQL text. */
export function statementCounts(): Map<string, number> {
  return new Map([...counts, ...[...sqliteMs].map(([text, ms]) => [`ms:${text}`, ms] as const)]);
}

/** What was sent between `before` and now, per `units`: the total and the `top` texts, as printable lines. */
export function statementsPerUnit(before: Map<string, number>, units: number, top = 25): string[] {
  const diff = [...counts].map(([text, n]) => [text, n - (before.get(text) ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  const total = diff.filter(([text]) => !text.startsWith('redis: ')).reduce((sum, [, n]) => sum + n, 0);
  const redis = diff.filter(([text]) => text.startsWith('redis: ')).reduce((sum, [, n]) => sum + n, 0);
  const msOf = (text: string) => (sqliteMs.get(text) ?? 0) - (before.get(`ms:${text}`) ?? 0);
  const sqliteTotal = diff.reduce((sum, [text]) => sum + msOf(text), 0);
  const timed = (text: string) => (sqliteTotal > 0 ? ` ${((msOf(text) / units) * 1000).toFixed(0).padStart(4)} µs` : '');
  return [
    `      SQL statements per service: ${(total / units).toFixed(1)}${sqliteTotal > 0 ? ` (SQLite running them ${(sqliteTotal / units).toFixed(2)} ms)` : ''}; Redis commands: ${(redis / units).toFixed(1)}`,
    ...diff.slice(0, top).map(([text, n]) => `      ${(n / units).toFixed(2).padStart(6)}${timed(text)}  ${text.length > 150 ? `${text.slice(0, 147)}...` : text}`),
  ];
}
