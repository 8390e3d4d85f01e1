// The panel's pino logger: JSON lines, secrets redacted, ordinary lines buffered briefly, warn and above written at once.
import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths pino replaces with `[redacted]` wherever they appear in a log object. */
export const REDACT_PATHS = [
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
export const SECURITY_EVENT = 'security';

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

/** A URL as it may be logged: one-time-link keys in the path masked, the query string replaced by `?[redacted]`. */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.replace(/^(\/otl\/)[^/#]+/, '$1[redacted]') + (q < 0 ? '' : '?[redacted]');
}

/** Error text as it may be logged: query strings inside it (fastify quotes URLs in some errors) redacted. */
export function loggableText(text: string): string {
  return text.replace(/\?[^\s'"`)]+/g, '?[redacted]').replace(/(\/otl\/)[^/\s'"`?]+/g, '$1[redacted]');
}

/** pino serializers: a request is method, redacted URL and client address; an error has its texts redacted. */
export const SAFE_SERIALIZERS = {
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
 * destination is stdout in two streams: lines below warn are buffered (written every FLUSH_INTERVAL_MS, when 4 KiB are
 * pending, and at exit) so request logging does not cost one write(2) per line; lines at warn and above go out
 * synchronously, before the logging call returns.
 */
export function createLogger(opts: { level?: string; destination?: DestinationStream } = {}): Logger {
  const options = {
    level: opts.level ?? process.env.VPNHOST_LOG_LEVEL ?? 'info',
    base: { service: 'vpnhost-panel' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: SAFE_SERIALIZERS,
  };
  return pino(options, opts.destination ?? stdoutDestination());
}

/** stdout: buffered below warn, synchronous from warn up (each line goes to exactly one of the two streams). */
export function stdoutDestination(fd = 1, flushIntervalMs = FLUSH_INTERVAL_MS): DestinationStream {
  const buffered = pino.destination({ dest: fd, sync: false, minLength: 4096 });
  setInterval(() => buffered.flush(), flushIntervalMs).unref();
  const immediate = pino.destination({ dest: fd, sync: true });
  return pino.multistream(
    [
      { level: 'trace', stream: buffered },
      { level: 'warn', stream: immediate },
    ],
    { dedupe: true },
  );
}
