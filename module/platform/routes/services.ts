// Admin API: create services, list them (paged, filtered), run lifecycle actions on them, read one.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PROVISION_STATUSES } from '../../contract/provision-status.ts';
import type { ServiceAdmin } from '../services/service-admin.ts';

const ServiceBodySchema = z.object({
  product_uuid: z.string().min(1).max(64),
  service_data: z.record(z.string(), z.unknown()),
});
const ActionParamsSchema = z.object({ uuid: z.string().max(64), action: z.string().max(64) });
const ActionBodySchema = z.object({ product_uuid: z.string().min(1).max(64).optional() }).nullish();

/** Paging shared by the admin lists: `page` from 1, `per_page` 1–500 (default 50). */
export const pageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  per_page: z.coerce.number().int().min(1).max(500).default(50),
});

const ListQuerySchema = pageQuerySchema.extend({
  status: z.enum(PROVISION_STATUSES).optional(),
  product: z.string().min(1).max(64).optional(),
  location: z.string().min(1).max(64).optional(),
  q: z.string().max(200).optional(),
});

/**
 * `POST /api/admin/services`, `GET /api/admin/services?status=&product=&location=&q=&page=&per_page=`,
 * `GET /api/admin/services/:uuid`, `POST /api/admin/services/:uuid/:action`.
 */
export const serviceRoutes = (services: ServiceAdmin): FastifyPluginAsyncZod => async (app) => {
  app.post('/services', { schema: { body: ServiceBodySchema } }, async (request, reply) => {
    const service = await services.createService(request.body.product_uuid, request.body.service_data);
    return reply.code(201).send(service);
  });

  app.get('/services', { schema: { querystring: ListQuerySchema } }, async (request) => services.list(request.query));

  app.get('/services/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }) } }, async (request) => services.describe(request.params.uuid));

  app.post('/services/:uuid/:action', { schema: { params: ActionParamsSchema, body: ActionBodySchema } }, async (request) =>
    services.runAction(request.params.uuid, request.params.action, request.body ?? {}),
  );
};
