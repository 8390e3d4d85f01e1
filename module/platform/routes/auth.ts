// Bearer-token guards: exactly one `Authorization: Bearer <token>` header, checked by digest against one scope's tokens.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, UNAUTHORIZED, WORKER_UNAUTHORIZED } from '../errors.ts';
import { loggablePath } from '../logger.ts';
import type { AdminTokenQueries } from '../store/query/repositories/admin-tokens.ts';

/**
 * How many Authorization headers the request carried. Node keeps only the first of repeated Authorization headers in
 * `request.headers`, so the raw header list is counted.
 */
export function authorizationHeaderCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') count++;
  return count;
}

/**
 * Adds an onRequest hook to `app` (an encapsulated scope) answering 401 `message` unless the request carries exactly
 * one Authorization header holding `Bearer <token>` with a valid token of `tokens`' scope. Refusals are logged at warn
 * (never the presented value).
 */
function requireBearerToken(app: FastifyInstance, tokens: AdminTokenQueries, message: string): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const single = authorizationHeaderCount(request) === 1;
    if (!match || !single || (await tokens.verify(match[1])) === null) refuseAccess(request, match && !single ? REPEATED_AUTHORIZATION : 'missing or invalid token', message);
  });
}

/** Why a request with more than one Authorization header is refused (Node would keep only the first). */
export const REPEATED_AUTHORIZATION = 'repeated Authorization header';

/** Logs the refusal at warn as a security event (never the presented value) and throws 401 `message`. */
export function refuseAccess(request: FastifyRequest, reason: string, message: string): never {
  request.log.warn({ security: true, event: 'auth_failed', reason, method: request.method, url: loggablePath(request.url) }, 'access refused');
  throw new HttpError(401, message);
}

/** The admin API's guard (admin-scope tokens only). */
export function requireAdminToken(app: FastifyInstance, tokens: AdminTokenQueries): void {
  requireBearerToken(app, tokens, UNAUTHORIZED);
}

/** The worker API's guard (worker-scope tokens only). */
export function requireWorkerToken(app: FastifyInstance, tokens: AdminTokenQueries): void {
  requireBearerToken(app, tokens, WORKER_UNAUTHORIZED);
}
