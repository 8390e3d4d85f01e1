// The platform's pino logger: JSON to stderr, secrets redacted wherever they could appear.
import { destination, pino, type Logger } from 'pino';

/** Paths pino censors (access hashes, passwords, tokens, keys, cookies, authorization headers). */
export const REDACT_PATHS = [
  'access_hash', '*.access_hash', '*.*.access_hash',
  'password', '*.password', '*.*.password',
  'private_key', '*.private_key', '*.*.private_key',
  'token', '*.token',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
];

/** Logger at `level` (env VPNHOST_LOG_LEVEL, default info) writing to stderr. */
export function createPlatformLogger(level = process.env.VPNHOST_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { app: 'vpnhost-platform' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination(2));
}
