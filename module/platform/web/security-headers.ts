// Security headers of every web page: a strict CSP (only this origin's scripts, styles and images), no framing, no sniffing.
import type { FastifyInstance } from 'fastify';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every answer carries (HSTS added when served over TLS). */
function headerSet(secure: boolean): Record<string, string> {
  return {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=()',
    ...(secure ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}

/** Adds the headers to every answer of `app`'s scope (pages, assets, AJAX); a callback hook (no promise per answer). */
export function addSecurityHeaders(app: FastifyInstance, secure: boolean): void {
  const headers = headerSet(secure);
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(headers);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
