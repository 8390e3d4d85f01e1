// The panel's pino logger: JSON lines with secrets (access hashes, cookies, passwords, private and license keys) redacted.
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

/**
 * A pino logger at `level` writing to `destination`, with REDACT_PATHS censored. The default destination is stdout,
 * buffered (4 KiB, flushed at exit and every second) so request logging does not cost one write(2) per line.
 */
export function createLogger(opts: { level?: string; destination?: DestinationStream } = {}): Logger {
  const options = {
    level: opts.level ?? process.env.VPNHOST_LOG_LEVEL ?? 'info',
    base: { service: 'vpnhost-panel' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return pino(options, opts.destination ?? bufferedStdout());
}

function bufferedStdout(): DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => stream.flush(), 1000).unref();
  return stream;
}
