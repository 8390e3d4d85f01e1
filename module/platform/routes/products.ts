// Admin API: create products (validated by the module's saveProductData) and read them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError, UNKNOWN_PRODUCT } from '../errors.ts';
import type { Platform } from '../platform.ts';

const ProductBodySchema = z.object({
  module: z.string().min(1).max(64),
  product_data: z.record(z.string(), z.unknown()),
});

/** `POST /api/admin/products`, `GET /api/admin/products`, `GET /api/admin/products/:uuid`. */
export const productRoutes = (platform: Platform): FastifyPluginAsyncZod => async (app) => {
  app.post('/products', { schema: { body: ProductBodySchema } }, async (request, reply) => {
    const product = await platform.ops.createProduct(request.body.module, request.body.product_data);
    return reply.code(201).send(product);
  });

  app.get('/products', async () => ({ products: platform.products.list() }));

  app.get('/products/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }) } }, async (request) => {
    const product = platform.products.get(request.params.uuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(request.params.uuid));
    return product;
  });
};
