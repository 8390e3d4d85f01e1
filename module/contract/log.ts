// Module logs (logModule): entries scrubbed of secrets, handed to a ModuleLogSink (the platform stores them) and sent to pino.
import type { Logger } from 'pino';
import type { Clock } from './platform-context.ts';
import { redact, redactText, REDACTED, SECRET_KEY_PATTERN } from './redact.ts';

export const LOG_LEVELS = ['info', 'error', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The spec's `logModule($type, $name, $action, $level, $request = [], $response = [])`, plus a context. */
export type LogModule = (
  type: string,
  name: string,
  action: string,
  level: LogLevel,
  request?: unknown,
  response?: unknown,
  context?: Record<string, unknown>,
) => void;


/** `password=…`, `"api_key": "…"`, `token: …` and `Bearer …` inside free text. */
const INLINE_SECRET =
  /((?:[\w-]*(?:pass(?:word)?|secret|token|api_?key|private_?key|access_?hash|license)[\w-]*)["']?\s*[:=]\s*["']?)([^"'&\s,;}]+)/gi;
const BEARER = /(\bBearer\s+)[A-Za-z0-9._~+/=-]+/g;

/** String values held under secret-named keys anywhere inside `value`. */
export function collectSecretValues(value: unknown, out = new Set<string>(), seen = new WeakSet<object>()): Set<string> {
  if (!value || typeof value !== 'object' || seen.has(value)) return out;
  seen.add(value);
  for (const [key, member] of Object.entries(value)) {
    if (SECRET_KEY_PATTERN.test(key) && (typeof member === 'string' || typeof member === 'number')) out.add(String(member));
    else collectSecretValues(member, out, seen);
  }
  return out;
}

/** JSON-safe copy: errors as {name, message}, bigints as strings, functions dropped, cycles cut. */
function plain(value: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (value instanceof Date) return value.toISOString();
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => plain(item, seen));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, seen)]));
}

/** Secret-named members replaced, known secret values and inline `key=value` secrets removed from every string. */
export function scrub(value: unknown, secrets: Iterable<string>): unknown {
  return scrubber(secrets)(value);
}

/** `scrub` with `secrets` bound (the list is sorted once for the several values of one entry). */
function scrubber(secrets: Iterable<string>): (value: unknown) => unknown {
  const list = [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const text = (s: string) => redactText(s, list).replace(INLINE_SECRET, `$1${REDACTED}`).replace(BEARER, `$1${REDACTED}`);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, m]) => [k, walk(m)]));
    return v;
  };
  return (value) => walk(redact(plain(value)));
}

/** One scrubbed entry on its way to storage (request, response and context already free of secrets). */
export interface ModuleLogEntry {
  module_type: string;
  module_name: string;
  action: string;
  level: LogLevel;
  request: unknown;
  response: unknown;
  context: Record<string, unknown>;
  /** ISO timestamp from the module's clock. */
  created_at: string;
}

/** A stored log row (request, response and context as parsed JSON). */
export interface ModuleLogRow extends ModuleLogEntry {
  id: number;
}

/**
 * Where module log entries are stored: the platform store's module_logs table
 * (module/platform/store/query/repositories/module-logs.ts, asynchronous: SQLite or PostgreSQL), or the platform's
 * worker API for a worker process without the store (buffered). `write` never blocks the job: logModule does not wait
 * for a returned promise (a failed write is logged), while a caller that needs the row stored — the lifecycle inside its
 * transaction — awaits it.
 */
export interface ModuleLogSink {
  write(entry: ModuleLogEntry): void | Promise<void>;
}

/**
 * What the log function writes to (the platform's module_logs store, the worker API in a remote worker). `secrets` are extra values
 * to remove (e.g. the module's configured API key).
 */
export interface ModuleLogDeps {
  sink: ModuleLogSink;
  logger: Logger;
  clock: Clock;
  secrets?: Iterable<string> | (() => Iterable<string>);
}

/**
 * Builds the spec's `logModule`. Every entry is scrubbed BEFORE storage: members with secret-named keys become
 * `[redacted]`, and their values (plus `deps.secrets`) are cut out of every other string, e.g. an error echoing a password.
 */
export function createLogModule(deps: ModuleLogDeps): LogModule {
  const sink = deps.sink;
  const extraSecrets = () => (typeof deps.secrets === 'function' ? deps.secrets() : (deps.secrets ?? []));
  return (type, name, action, level, request = [], response = [], context = {}) => {
    if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new RangeError(`unknown log level ${String(level)}`);
    const secrets = collectSecretValues({ request, response, context });
    for (const s of extraSecrets()) secrets.add(s);
    const clean = scrubber(secrets);
    const entry = {
      request: clean(request),
      response: clean(response),
      context: clean(context) as Record<string, unknown>,
    };
    const at = deps.clock.now().toISOString();
    const stored = sink.write({ module_type: type, module_name: name, action, level, ...entry, created_at: at });
    if (stored) {
      stored.catch((error: unknown) =>
        deps.logger.error({ module_type: type, module_name: name, action, err: error instanceof Error ? error.message : String(error) }, 'module log entry not stored'));
    }
    if (deps.logger.isLevelEnabled?.(level) === false) return;
    deps.logger[level]({ ...entry.context, module_type: type, module_name: name, action, request: entry.request, response: entry.response }, `module ${action}`);
  };
}
