// Smtp's admin API (under /api/admin, behind admin tokens): the recorded sends, newest first, without their bodies.
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SendStore } from './send-store.ts';

const SendQuerySchema = z.object({
  service: z.string().min(1).max(64).optional(),
  event: z.string().regex(/^[a-z_]+\.[a-z_]+$/).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** `GET /smtp/sends?service=&event=&limit=`: `{sends: [...]}` (recipient, subject, status, attempts, server reply, last error). */
export function smtpAdminRoutes(sends: SendStore | null): FastifyPluginAsync {
  return async (app) => {
    const api = app.withTypeProvider<ZodTypeProvider>();
    api.get('/smtp/sends', { schema: { querystring: SendQuerySchema } }, async (request) => ({
      sends: sends ? await sends.list({ service_uuid: request.query.service, event: request.query.event, limit: request.query.limit }) : [],
    }));
  };
}
