// Request body parsing: application/x-www-form-urlencoded (every method) and JSON; an empty body parses to {}.
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { ApiError, OWN } from './errors.ts';

/** Largest accepted body (IKEv2 PEM imports are the biggest legitimate payloads). */
export const BODY_LIMIT = 1024 * 1024;

/**
 * Registers on `app` itself (not in a child context) the form parser (@fastify/formbody: repeated keys become arrays, which the field helpers reject) and a
 * JSON parser that maps an empty body to `{}` and malformed JSON to `Malformed request body` (400).
 */
export function registerBodyParsers(app: FastifyInstance): void {
  void app.register(formbody, { bodyLimit: BODY_LIMIT });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    const textBody = typeof body === 'string' ? body : body.toString('utf8');
    if (textBody.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(textBody));
    } catch {
      done(new ApiError(OWN.MALFORMED_BODY), undefined);
    }
  });
}
