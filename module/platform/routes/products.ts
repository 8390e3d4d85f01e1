// Admin API: create products (validated by the module's saveProductData), edit them and read them; the listing
// fields (name, description, position, visible) sit beside `module` and `product_data`.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Catalogue } from '../services/catalogue.ts';

const Listing = {
  name: z.string().max(1000).optional(),
  description: z.string().max(5000).optional(),
  position: z.number().int().optional(),
  visible: z.boolean().optional(),
};
const ProductBodySchema = z.object({ module: z.string().min(1).max(64), product_data: z.record(z.string(), z.unknown()), ...Listing });
const ProductPatchSchema = z.object({ product_data: z.record(z.string(), z.unknown()).optional(), ...Listing });

/** The listing of a body when it names any listing field (the catalogue checks it), else undefined. */
function listingOf(body: Record<string, unknown>, current?: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = ['name', 'description', 'position', 'visible'];
  if (!keys.some((k) => body[k] !== undefined)) return undefined;
  return Object.fromEntries(keys.map((k) => [k, body[k] ?? current?.[k]]));
}

/** `POST /api/admin/products`, `GET /api/admin/products`, `GET|PATCH /api/admin/products/:uuid`. */
export const productRoutes = (catalogue: Catalogue): FastifyPluginAsyncZod => async (app) => {
  app.post('/products', { schema: { body: ProductBodySchema } }, async (request, reply) => {
    const product = await catalogue.createProduct(request.body.module, request.body.product_data, listingOf(request.body));
    return reply.code(201).send(product);
  });

  app.get('/products', async () => ({ products: (await catalogue.list()) }));

  app.get('/products/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }) } }, async (request) => (await catalogue.require(request.params.uuid)));

  app.patch('/products/:uuid', { schema: { params: z.object({ uuid: z.string().max(64) }), body: ProductPatchSchema } }, async (request) => {
    const current = (await catalogue.require(request.params.uuid));
    return catalogue.updateProduct(current.uuid, request.body.product_data ?? current.product_data, listingOf(request.body, { ...current }));
  });
};
