// The admin and worker APIs' error catalogue and the one mapper turning errors into `{error}` JSON answers.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

export const UNAUTHORIZED = 'unauthorized: a valid admin bearer token is required';
export const WORKER_UNAUTHORIZED = 'unauthorized: a valid worker bearer token is required';
export const NOT_FOUND = 'not found';
const INTERNAL_ERROR = 'internal error';
export const UNKNOWN_MODULE = (name: string) => `unknown module: ${name}`;
export const UNKNOWN_PRODUCT = (uuid: string) => `product not found: ${uuid}`;
export const UNKNOWN_SERVICE = (uuid: string) => `service not found: ${uuid}`;
export const UNKNOWN_ACTION = (action: string) => `unknown action: ${action} (one of create, suspend, unsuspend, termination, change_package)`;
export const UNKNOWN_TASK = (id: string) => `task not found: ${id}`;
/** The spec's answer of a failed `hasPermission` check (status 403), for pages and JSON alike. */
export const INSUFFICIENT_PERMISSIONS = 'Insufficient permissions';
export const CSRF_REFUSED = 'the form has expired or did not come from this site: reload the page and try again';
export const LOGIN_FAILED = 'wrong e-mail address or password';
/** A login refused by the throttle (5 failures for one address or IP within 15 minutes lock it for 15 minutes). */
export const LOGIN_THROTTLED = 'Too many attempts, try again later.';
export const SESSION_REQUIRED = 'unauthorized: log in first';

/** An error with the HTTP status and the JSON body it answers with. */
export class HttpError extends Error {
  constructor(readonly statusCode: number, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Fastify error handler: HttpError as is, schema failures as 400 with the first issue, everything else 500. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof HttpError) {
    void reply.code(error.statusCode).send({ error: error.message, ...error.extra });
    return;
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = error.validation.map((v) => `${v.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body'}: ${v.message}`);
    void reply.code(400).send({ error: `invalid request: ${issues.join('; ')}` });
    return;
  }
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) {
    void reply.code(status).send({ error: error.message });
    return;
  }
  request.log.error({ err: error }, 'unexpected error');
  void reply.code(500).send({ error: INTERNAL_ERROR });
}
