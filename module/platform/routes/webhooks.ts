// Payment webhooks: `POST|GET /webhooks/payment/<gateway_uuid>` hands the exact raw body bytes and the headers to the
// gateway's Payment module (apiWebhookPost / apiWebhookGet) and answers what it returns. No token: the module checks
// the gateway's signature.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ModuleRequest, ModuleResponse } from '../../contract/http.ts';
import { HttpError } from '../errors.ts';
import type { ModuleAdmin } from '../services/module-admin.ts';

/** Largest webhook body accepted. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
const GATEWAY_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The body as a module sees it: JSON when it parses as JSON, else the text. */
function parsedBody(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toModuleRequest(request: FastifyRequest, raw: Buffer): ModuleRequest {
  return {
    method: request.method,
    headers: { ...request.headers },
    query: { ...(request.query as Record<string, unknown>) },
    body: raw.length ? parsedBody(raw) : null,
    rawBody: raw,
    ip: request.ip,
  };
}

/** Registered under the prefix `/webhooks/payment`. Every content type is read as raw bytes, never parsed by Fastify. */
export const webhookRoutes = (admin: ModuleAdmin): FastifyPluginAsync => async (app) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  const handle = async (request: FastifyRequest<{ Params: { gateway: string } }>, raw: Buffer): Promise<ModuleResponse> => {
    if (!GATEWAY_UUID.test(request.params.gateway)) throw new HttpError(404, `module instance not found: ${request.params.gateway}`);
    return admin.webhook(request.params.gateway.toLowerCase(), toModuleRequest(request, raw));
  };
  const send = (reply: import('fastify').FastifyReply, answer: ModuleResponse) => {
    reply.code(answer.status);
    for (const [key, value] of Object.entries(answer.headers ?? {})) reply.header(key, value);
    const body = answer.body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (!answer.headers || !Object.keys(answer.headers).some((k) => k.toLowerCase() === 'content-type')) reply.type('text/plain; charset=utf-8');
      return reply.send(body);
    }
    return reply.send(body ?? null);
  };

  app.post<{ Params: { gateway: string } }>('/:gateway', async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    return send(reply, await handle(request, raw));
  });
  app.get<{ Params: { gateway: string } }>('/:gateway', async (request, reply) => send(reply, await handle(request, Buffer.alloc(0))));
};
