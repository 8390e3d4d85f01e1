// The platform's pino logger: JSON to stderr, secrets redacted wherever they could appear, URLs without query values
// or credential path segments (one-time-link keys, download tokens) however they are spelled.
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

/** What replaces a secret in a logged path or query. */
const MASK = '[redacted]';
/** A path segment that is an opaque credential wherever it appears: 32+ characters of hex / base64url, not a UUID. */
const OPAQUE_TOKEN = /^[A-Za-z0-9_~+=-]{32,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Percent-decoding repeated until stable (at most 4 rounds); a malformed sequence does not stop the others (byte-wise). */
function decodeFully(path: string): string {
  let out = path;
  for (let i = 0; i < 4 && out.includes('%'); i++) {
    let next: string;
    try {
      next = decodeURIComponent(out);
    } catch {
      next = out.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * A URL as it may be logged: the path decoded and normalized (`%6ftl`, `//otl`, `/x/../otl`, `\otl` all read
 * `/otl`), the key and download token of a one-time-link path (`/otl/<key>/<token>/<file>`) and every other opaque
 * token segment replaced by `[redacted]`, and `?[redacted]` in place of any query string.
 */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  const raw = (q < 0 ? url : url.slice(0, q)).slice(0, 2048);
  const segments: string[] = [];
  for (const segment of decodeFully(raw).replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const masked = segments.map((segment, i) => {
    const afterOtl = segments.slice(0, i).some((s) => s.toLowerCase() === 'otl');
    if (afterOtl && i < segments.length - 1) return MASK;
    if (afterOtl && !/^(wireguard\.conf|ca\.pem|profile)$/.test(segment)) return MASK;
    return OPAQUE_TOKEN.test(segment) && !UUID.test(segment) ? MASK : segment;
  });
  return `/${masked.join('/')}${q < 0 ? '' : `?${MASK}`}`;
}

/** Free text (an error message, a stack) as it may be logged: every path-like run through `loggablePath`. */
export function loggableText(text: string): string {
  return text.replace(/\/[^\s'"`)]*/g, (path) => loggablePath(path));
}

/** Serializers for request and error objects: method, redacted URL and address; error texts with paths and queries redacted. */
export const PLATFORM_SERIALIZERS = {
  req(req: { method?: string; url?: string; ip?: string }) {
    return { method: req.method, url: loggablePath(req.url ?? ''), remoteAddress: req.ip };
  },
  err(err: unknown) {
    const out = stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
    if (!out || typeof out !== 'object') return out;
    for (const field of ['message', 'stack']) {
      if (typeof out[field] === 'string') out[field] = loggableText(out[field] as string);
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
