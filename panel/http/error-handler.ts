// The one error mapper: any thrown error → the envelope with a fitting HTTP status; unknown routes → 404 envelope.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { fail } from './envelope.ts';
import { OWN, isApiError, statusForText } from './errors.ts';

/** What the client sees for an error: HTTP status and the envelope's error text. */
export interface MappedError {
  httpStatus: number;
  text: string;
  /** True when the error was unexpected (logged at error level with the request id). */
  unexpected: boolean;
}

const FASTIFY_CLIENT_TEXTS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: OWN.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_CTP_BODY_TOO_LARGE: OWN.BODY_TOO_LARGE,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: OWN.MALFORMED_BODY,
  FST_ERR_CTP_EMPTY_JSON_BODY: OWN.MALFORMED_BODY,
  FST_ERR_CTP_INVALID_JSON_BODY: OWN.MALFORMED_BODY,
};

/**
 * Maps an error to status and text; every refusal text's status comes from the catalogue (`statusForText`). `ApiError` keeps its text; fastify validation errors carrying a
 * zod custom message use that message; fastify's own 4xx errors (body parsing, media type, size) get fixed texts;
 * everything else is unexpected: 500 `Internal server error (request id <id>)`, never a stack or a message.
 */
export function mapError(err: unknown, requestId: string): MappedError {
  if (isApiError(err)) return { httpStatus: statusForText(err.text), text: err.message, unexpected: false };
  const e = err as Partial<FastifyError> & { validation?: Array<{ message?: string; params?: { message?: string } }> };
  if (Array.isArray(e?.validation) && e.validation.length > 0) {
    const message = e.validation[0]?.message;
    const text = typeof message === 'string' && message ? message : OWN.BAD_REQUEST;
    return { httpStatus: statusForText(text), text, unexpected: false };
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const known = (e.code && FASTIFY_CLIENT_TEXTS[e.code]) || (e instanceof SyntaxError ? OWN.MALFORMED_BODY : undefined);
    // a text of ours takes the catalogue's status; any other fastify 4xx keeps fastify's status with `Bad request`
    return known ? { httpStatus: statusForText(known), text: known, unexpected: false } : { httpStatus: status, text: OWN.BAD_REQUEST, unexpected: false };
  }
  return { httpStatus: 500, text: `${OWN.INTERNAL} (request id ${requestId})`, unexpected: true };
}

/** Fastify error handler answering the envelope. */
export function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = mapError(err, String(request.id));
  if (mapped.unexpected) request.log.error({ err }, 'unexpected error');
  else if (!isApiError(err)) request.log.info({ code: (err as FastifyError)?.code, status: mapped.httpStatus }, 'rejected request');
  void reply.code(mapped.httpStatus).type('application/json; charset=utf-8').send(fail(mapped.text));
}

/** Fastify not-found handler answering the envelope (404 `Not found`). */
export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).type('application/json; charset=utf-8').send(fail(OWN.NOT_FOUND));
}
