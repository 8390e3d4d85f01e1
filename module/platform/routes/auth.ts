// Bearer-token guards: `Authorization: Bearer <token>`, checked by digest against the tokens of one scope.
import type { FastifyInstance } from 'fastify';
import { HttpError, UNAUTHORIZED, WORKER_UNAUTHORIZED } from '../errors.ts';
import type { AdminTokenRepository } from '../store/repositories/admin-tokens.ts';

/** Adds an onRequest hook to `app` (an encapsulated scope) answering 401 `message` without a valid token of `tokens`' scope. */
export function requireBearerToken(app: FastifyInstance, tokens: AdminTokenRepository, message: string): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match || tokens.verify(match[1]) === null) {
      throw new HttpError(401, message);
    }
  });
}

/** The admin API's guard (admin-scope tokens only). */
export function requireAdminToken(app: FastifyInstance, tokens: AdminTokenRepository): void {
  requireBearerToken(app, tokens, UNAUTHORIZED);
}

/** The worker API's guard (worker-scope tokens only). */
export function requireWorkerToken(app: FastifyInstance, tokens: AdminTokenRepository): void {
  requireBearerToken(app, tokens, WORKER_UNAUTHORIZED);
}
