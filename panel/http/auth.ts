// Access-hash authentication for /api/v1: one exact `access_hash` cookie, bound client IP, checked per request.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccessHashService } from '../services/access-hashes.ts';
import { clientIp } from './client-ip.ts';
import { ApiError, E } from './errors.ts';
import { loggableUrl, securityEvent } from '../logger.ts';

/** Name of the cookie carrying the access hash. */
const ACCESS_HASH_COOKIE = 'access_hash';

/** The only accepted form of an access hash: exactly 80 lower-case hex characters. */
const EXACT_HASH = /^[0-9a-f]{80}$/;

/** The address a request is judged by (socket peer, or X-Forwarded-For behind a trusted proxy). */
function requestClientIp(request: FastifyRequest, trustProxy: readonly string[]): string | null {
  return clientIp(request.socket?.remoteAddress ?? request.ip, request.headers['x-forwarded-for'], trustProxy);
}

/**
 * The access hash of a Cookie header, or undefined unless the header holds exactly one cookie named `access_hash`
 * (any letter case counts towards "one") whose value is exactly 80 lower-case hex characters: no quotes, no
 * percent-encoding, no whitespace around the value, no second `access_hash` cookie (several Cookie headers arrive
 * joined by `; `, so they are covered too).
 */
export function exactAccessHash(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  let found: string | undefined;
  let count = 0;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (name.toLowerCase() !== ACCESS_HASH_COOKIE) continue;
    count++;
    const pair = part.trimStart();
    if (pair.startsWith(`${ACCESS_HASH_COOKIE}=`)) found = pair.slice(ACCESS_HASH_COOKIE.length + 1);
  }
  return count === 1 && found !== undefined && EXACT_HASH.test(found) ? found : undefined;
}

/** Why a request was refused, for the security log line (never the presented value). */
function refusalReason(header: string | string[] | undefined, hash: string | undefined): string {
  if (hash !== undefined) return 'unknown hash or other client address';
  if (header === undefined || !/access_hash/i.test(String(header))) return 'no access_hash cookie';
  return 'malformed or repeated access_hash cookie';
}

/**
 * An onRequest hook that answers `Not authorized` (401) unless the request carries one exact `access_hash` cookie
 * holding a stored hash bound to the client's address. Runs before body parsing, so unauthenticated bodies are never
 * parsed. Each refusal is logged at once (synchronously) as a security event, without the presented value.
 */
export function accessHashHook(accessHashes: AccessHashService, trustProxy: readonly string[] = []): onRequestAsyncHookHandler {
  return async (request) => {
    const header = request.headers.cookie;
    const hash = exactAccessHash(header);
    const ip = requestClientIp(request, trustProxy);
    if (hash !== undefined && accessHashes.verify(hash, ip)) return;
    securityEvent(request.log, {
      event: 'auth_failed', reason: refusalReason(header, hash), method: request.method, url: loggableUrl(request.url), client: ip,
    }, 'access refused');
    throw new ApiError(E.NOT_AUTHORIZED);
  };
}
