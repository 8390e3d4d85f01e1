// The platform's pino logger: JSON to stderr, secrets redacted wherever they could appear, URLs without query values.
import { destination, pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

/** Paths pino censors (access hashes, passwords, tokens, keys, cookies, authorization headers). */
export const REDACT_PATHS = [
  'access_hash', '*.access_hash', '*.*.access_hash',
  'password', '*.password', '*.*.password',
  'private_key', '*.private_key', '*.*.private_key',
  'token', '*.token',
  'license_key', '*.license_key',
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
];

/** A URL as it may be logged: the path, and `?[redacted]` in place of any query string. */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?[redacted]`;
}

/** Serializers for request and error objects: method, redacted URL and address; error texts with query strings redacted. */
export const PLATFORM_SERIALIZERS = {
  req(req: { method?: string; url?: string; ip?: string }) {
    return { method: req.method, url: loggablePath(req.url ?? ''), remoteAddress: req.ip };
  },
  err(err: unknown) {
    const out = stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
    if (!out || typeof out !== 'object') return out;
    for (const field of ['message', 'stack']) {
      if (typeof out[field] === 'string') out[field] = (out[field] as string).replace(/\?[^\s'"`)]+/g, '?[redacted]');
    }
    return out;
  },
};

/** Logger at `level` (env VPNHOST_LOG_LEVEL, default info) writing to `dest` (default stderr, each line synchronously). */
export function createPlatformLogger(level = process.env.VPNHOST_LOG_LEVEL ?? 'info', dest: DestinationStream = destination(2)): Logger {
  return pino(
    { level, base: { app: 'vpnhost-platform' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: PLATFORM_SERIALIZERS },
    dest,
  );
}
