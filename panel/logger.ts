// The panel's pino logger: JSON lines, secrets redacted, ordinary lines buffered briefly, warn and above written at once.
import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths pino replaces with `[redacted]` wherever they appear in a log object. */
const REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-access-hash"]',
  'headers.cookie',
  'headers.authorization',
  'res.headers["set-cookie"]',
  'cookie',
  'access_hash',
  'password',
  'private_key',
  'key',
  'ca_key',
  'server_key',
  'ftp_password',
  'hash',
  '*.cookie',
  '*.access_hash',
  '*.password',
  '*.private_key',
  '*.key',
  '*.ca_key',
  '*.server_key',
  '*.ftp_password',
  '*.hash',
  'body.*',
  'req.body',
];

/** How often buffered lines are written out at the latest (also when 4 KiB are pending, and at exit). */
export const FLUSH_INTERVAL_MS = 250;

/**
 * The documented guarantee: a process killed without warning (SIGKILL, OOM killer) loses at most the ordinary log
 * lines of this last stretch of time; lines at warn and above (security events, errors) are never lost, they are
 * written before the code that logged them goes on (before the refused request is answered).
 */
export const LOG_LOSS_BOUND_MS = 1000;

/** Marks a log line as security-relevant; always logged at warn, so it is written synchronously. */
const SECURITY_EVENT = 'security';

/** The part of a logger a security event needs (pino loggers and fastify's request loggers have it). */
export interface SecurityLog {
  warn(obj: object, msg: string): void;
}

/**
 * Logs a security-relevant event (auth failure, access-hash or license change) at warn with `security: true`. The
 * panel's default destination writes warn lines synchronously, so the line is in the log (file, pipe or journal)
 * when this returns. `fields` must not hold a secret: the value a client presented is never logged.
 */
export function securityEvent(log: SecurityLog | undefined, fields: Record<string, unknown>, msg: string): void {
  log?.warn({ [SECURITY_EVENT]: true, ...fields }, msg);
}

/** A hex run as long as a one-time-link key (80), a download token (64) or a truncated one: masked wherever it stands. */
const LONG_HEX = /[0-9a-f]{40,}/gi;
/** The one-time-link page's prefix (any case) and what follows it: the key, the download token, the file. */
const OTL_TAIL = /^\/(otl)\/[^]*$/i;

/** `text` percent-decoded until it stops changing (at most 3 rounds: double encoding too); bad escapes stay as they are. */
function decodeFully(text: string): string {
  let out = text;
  for (let round = 0; round < 3; round++) {
    const next = out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * A URL path as it may be logged. The path is read as a server could (percent-decoded, also twice-encoded, `\` as
 * `/`, repeated slashes as one): below the page's `/otl/` in any case everything is masked (`/otl/[redacted]`: key,
 * download token and file), and so is any run of 40 or more hex digits anywhere else. A masked path is logged in
 * that decoded form; a path with nothing to mask is logged as it came.
 */
function loggablePath(path: string): string {
  const normal = decodeFully(path).replace(/\\/g, '/').replace(/\/{2,}/g, '/');
  const masked = normal.replace(OTL_TAIL, '/$1/[redacted]').replace(LONG_HEX, '[redacted]');
  return masked === normal ? path : masked;
}

/**
 * A URL as it may be logged: one-time-link keys and download tokens in the path masked however the path is spelled
 * (see {@link loggablePath}), the query string replaced by `?[redacted]`.
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  return loggablePath(q < 0 ? url : url.slice(0, q)) + (q < 0 ? '' : '?[redacted]');
}

/** Error text as it may be logged: query strings inside it (fastify quotes URLs in some errors) and OTL paths redacted. */
export function loggableText(text: string): string {
  return decodeFully(text)
    .replace(/\?[^\s'"`)]+/g, '?[redacted]')
    .replace(/\/(otl)\/+[^\s'"`)]*/gi, '/$1/[redacted]')
    .replace(LONG_HEX, '[redacted]');
}

/** pino serializers: a request is method, redacted URL and client address; an error has its texts redacted. */
const SAFE_SERIALIZERS = {
  req(req: { method?: string; url?: string; ip?: string; socket?: { remoteAddress?: string } }) {
    return { method: req.method, url: loggableUrl(req.url ?? ''), remoteAddress: req.ip ?? req.socket?.remoteAddress };
  },
  err(err: unknown) {
    const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
    if (!out || typeof out !== 'object') return out;
    for (const field of ['message', 'stack']) if (typeof out[field] === 'string') out[field] = loggableText(out[field] as string);
    return out;
  },
};

/**
 * A pino logger at `level` writing to `destination`, with REDACT_PATHS censored and SAFE_SERIALIZERS. The default
 * destination is a {@link BatchedLineStream} on stdout: lines below warn are kept in memory and written in batches
 * (every FLUSH_INTERVAL_MS, when 4 KiB are pending, and at exit) so request logging does not cost one write(2) per
 * line; a line at warn or above is written, with everything pending before it, before the logging call returns.
 */
export function createLogger(opts: { level?: string; destination?: DestinationStream } = {}): Logger {
  const options = {
    level: opts.level ?? process.env.VPNHOST_LOG_LEVEL ?? 'info',
    base: { service: 'vpnhost-panel' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: SAFE_SERIALIZERS,
  };
  return pino(options, opts.destination ?? new BatchedLineStream(1));
}

/** pino's level number of warn: lines at or above it are written at once. */
const WARN_LEVEL = 40;
/** Pending bytes that trigger a write before the next tick of the flush timer. */
const BATCH_BYTES = 4096;
/** Streams written out by the one exit handler. */
const openStreams = new Set<BatchedLineStream>();
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A pino destination on a file descriptor that batches lines and writes them synchronously, in order, from the main
 * thread: a batch goes out when a line at warn or above arrives (that line and everything before it), when
 * BATCH_BYTES are pending, every `flushIntervalMs`, and at process exit (normal or after an uncaught exception).
 * Only SIGKILL-like deaths lose lines: the pending ones, at most `flushIntervalMs` worth of lines below warn.
 * A failed write (closed stdout) drops the batch instead of throwing into the code that logged.
 */
export class BatchedLineStream {
  /** Asks pino to set `lastLevel` before each write. */
  readonly [pino.symbols.needsMetadataGsym] = true as const;
  lastLevel = 0;
  private pending = '';

  constructor(private readonly fd: number, flushIntervalMs = FLUSH_INTERVAL_MS) {
    setInterval(() => this.flush(), flushIntervalMs).unref();
    if (openStreams.size === 0) process.on('exit', flushOpenStreams);
    openStreams.add(this);
  }

  write(line: string): boolean {
    this.pending += line;
    if (this.lastLevel >= WARN_LEVEL || this.pending.length >= BATCH_BYTES) this.flush();
    return true;
  }

  /** Writes every pending line now (synchronously); `cb` is called after. */
  flush(cb?: (err?: Error) => void): void {
    if (this.pending.length > 0) {
      const data = Buffer.from(this.pending, 'utf8');
      this.pending = '';
      writeFully(this.fd, data);
    }
    cb?.();
  }
}

function flushOpenStreams(): void {
  for (const stream of openStreams) stream.flush();
}

/** write(2) until every byte is out; EAGAIN (a non-blocking pipe that is full) waits 1 ms and retries. */
function writeFully(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
