// Access-hash authentication for /api/v1: cookie `access_hash`, bound client IP, checked against SQLite per request.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccessHashService } from '../services/access-hashes.ts';
import { clientIp, readCookie } from './client-ip.ts';
import { ApiError, E } from './errors.ts';

/** Name of the cookie carrying the access hash. */
export const ACCESS_HASH_COOKIE = 'access_hash';

/** The address a request is judged by (socket peer, or X-Forwarded-For behind a trusted proxy). */
export function requestClientIp(request: FastifyRequest, trustProxy: readonly string[]): string | null {
  return clientIp(request.socket?.remoteAddress ?? request.ip, request.headers['x-forwarded-for'], trustProxy);
}

/**
 * An onRequest hook that answers `Not authorized` (401) unless the `access_hash` cookie holds a stored hash bound to
 * the client's address. Runs before body parsing, so unauthenticated bodies are never parsed.
 */
export function accessHashHook(accessHashes: AccessHashService, trustProxy: readonly string[] = []): onRequestAsyncHookHandler {
  return async (request) => {
    const hash = readCookie(request.headers.cookie, ACCESS_HASH_COOKIE);
    if (!accessHashes.verify(hash, requestClientIp(request, trustProxy))) throw new ApiError(E.NOT_AUTHORIZED, 401);
  };
}
