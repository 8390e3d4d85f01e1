// Admin API: create products (validated by the module's saveProductData) and read them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Catalogue } from '../services/catalogue.ts';

const ProductBodySchema = z.object({
  module: z.string().min(1).max(64),
  product_data: z.record(z.string(), z.unknown()),
});

/** `POST /api/admin/products`, `GET /api/admin/products`, `GET /api/admin/products/:uuid`. */
export const productRoutes = (catalogue: Catalogue): FastifyPluginAsyncZod => async (app) => {
  app.post('/products', { schema: { body: ProductBodySchema } }, async (request, reply) => {
    const product = await catalogue.createProduct(request.body.module, request.body.product_data);
    return reply.code(201).send(product);
  });

  app.get('/products', async () => ({ products: catalogue.list() }));

  app.get('/products/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }) } }, async (request) => catalogue.require(request.params.uuid));
};
