// Bearer-token guard of the admin API: `Authorization: Bearer <token>`, checked by digest against admin_tokens.
import type { FastifyInstance } from 'fastify';
import { HttpError, UNAUTHORIZED } from '../errors.ts';
import type { AdminTokenRepository } from '../store/repositories/admin-tokens.ts';

/** Adds an onRequest hook to `app` (an encapsulated scope) that answers 401 without a valid token. */
export function requireAdminToken(app: FastifyInstance, tokens: AdminTokenRepository): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match || tokens.verify(match[1]) === null) {
      throw new HttpError(401, UNAUTHORIZED);
    }
  });
}
