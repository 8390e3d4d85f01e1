// Fastify makes a child logger for every request (bindings `{reqId}`). With the platform's redaction paths pino
// serialises the bindings through its redaction on each child, a measurable share of a page's time, although the
// HTTP logger is at `warn` and a page rarely logs anything. The child here is made on the first enabled log call.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A request's logger: forwards to `parent.child(bindings, opts)`, made only when a message passes the level. */
class LazyChildLogger {
  private made: Logger | null = null;
  private ownLevel: string;

  constructor(private readonly parent: Logger, private readonly bindings: Bindings, private readonly opts: ChildLoggerOptions) {
    this.ownLevel = opts.level ?? parent.level;
  }

  private real(): Logger {
    this.made ??= this.parent.child(this.bindings, { ...this.opts, level: this.ownLevel });
    return this.made;
  }

  get level(): string {
    return this.made ? this.made.level : this.ownLevel;
  }

  set level(level: string) {
    this.ownLevel = level;
    if (this.made) this.made.level = level;
  }

  private enabled(method: Method): boolean {
    const values = this.parent.levels.values;
    return (values[method] ?? 0) >= (values[this.level] ?? Infinity);
  }

  private log(method: Method, args: unknown[]): void {
    if (this.enabled(method)) (this.real()[method] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void { this.log('fatal', args); }
  error(...args: unknown[]): void { this.log('error', args); }
  warn(...args: unknown[]): void { this.log('warn', args); }
  info(...args: unknown[]): void { this.log('info', args); }
  debug(...args: unknown[]): void { this.log('debug', args); }
  trace(...args: unknown[]): void { this.log('trace', args); }
  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return this.enabled(level as Method);
  }

  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, opts);
  }
}

/** Fastify's `childLoggerFactory`: request loggers that cost nothing until they log. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger as unknown as Logger, bindings, opts) as unknown as FastifyBaseLogger;
}
