// Admin API: create services, run lifecycle actions on them, read their status and provision data.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Platform } from '../platform.ts';

const ServiceBodySchema = z.object({
  product_uuid: z.string().min(1).max(64),
  service_data: z.record(z.string(), z.unknown()),
});
const ActionParamsSchema = z.object({ uuid: z.string().max(64), action: z.string().max(64) });
const ActionBodySchema = z.object({ product_uuid: z.string().min(1).max(64).optional() }).nullish();

/** `POST /api/admin/services`, `GET /api/admin/services/:uuid`, `POST /api/admin/services/:uuid/:action`. */
export const serviceRoutes = (platform: Platform): FastifyPluginAsyncZod => async (app) => {
  app.post('/services', { schema: { body: ServiceBodySchema } }, async (request, reply) => {
    const service = await platform.ops.createService(request.body.product_uuid, request.body.service_data);
    return reply.code(201).send(service);
  });

  app.get('/services/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }) } }, async (request) =>
    platform.ops.describeService(request.params.uuid),
  );

  app.post('/services/:uuid/:action', { schema: { params: ActionParamsSchema, body: ActionBodySchema } }, async (request) =>
    platform.ops.runAction(request.params.uuid, request.params.action, request.body ?? {}),
  );
};
