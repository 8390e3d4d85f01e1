// Worker API, platform store: services, products, panel connections and module logs for a remote worker's modules.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { NO_VERSION } from '../../contract/versions.ts';
import { HttpError, UNKNOWN_PRODUCT, UNKNOWN_SERVICE } from '../errors.ts';
import type { PlatformRegistry } from '../features/registry.ts';

/** What the worker API's store routes read and write. */
export type WorkerStoreDeps = Pick<PlatformRegistry, 'versions' | 'queue' | 'loaded' | 'services' | 'lifecycle' | 'products' | 'moduleLogStore'>;
import { dataBodySchema, moduleLogsBodySchema, statusBodySchema, uuidParamsSchema } from '../worker-api/schemas.ts';

/**
 * `GET /info`, `GET /services/:uuid`, `PUT /services/:uuid/provision-status|provision-data|service-data`,
 * `GET /products/:uuid`, `POST /module-logs` (a panel's connection is VpnProduct's own worker route). Service secrets are
 * answered opened (the worker's modules use them); they travel only over this authenticated API and are never logged.
 */
export const workerStoreRoutes = (platform: WorkerStoreDeps): FastifyPluginAsyncZod => async (app) => {
  app.get('/info', async () => {
    // Versions another platform process recorded since this one loaded them.
    await platform.versions.refresh();
    return {
      queue: platform.queue.kind,
      modules: platform.loaded.map((m) => ({ type: m.type, name: m.name, version: platform.versions.installed(m.type, m.name) ?? NO_VERSION })),
    };
  });

  app.get('/services/:uuid', { schema: { params: uuidParamsSchema } }, async (request) => {
    const service = await platform.services.get(request.params.uuid);
    if (!service) throw new HttpError(404, UNKNOWN_SERVICE(request.params.uuid));
    return service;
  });

  app.put('/services/:uuid/provision-status', { schema: { params: uuidParamsSchema, body: statusBodySchema } }, async (request, reply) => {
    await platform.lifecycle.set(request.params.uuid, request.body.status, request.body.reason);
    return reply.code(204).send();
  });

  app.put('/services/:uuid/provision-data', { schema: { params: uuidParamsSchema, body: dataBodySchema } }, async (request, reply) => {
    await platform.services.saveProvisionData(request.params.uuid, request.body.data);
    return reply.code(204).send();
  });

  app.put('/services/:uuid/service-data', { schema: { params: uuidParamsSchema, body: dataBodySchema } }, async (request, reply) => {
    await platform.services.saveServiceData(request.params.uuid, request.body.data);
    return reply.code(204).send();
  });

  app.get('/products/:uuid', { schema: { params: uuidParamsSchema } }, async (request) => {
    const product = await platform.products.get(request.params.uuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(request.params.uuid));
    return product;
  });

  // Entries come scrubbed by the worker's logModule; the store scrubs them again and writes the batch in one transaction.
  app.post('/module-logs', { schema: { body: moduleLogsBodySchema }, bodyLimit: 4 * 1024 * 1024 }, async (request, reply) => {
    await platform.moduleLogStore.writeReceived(request.body.entries);
    return reply.code(204).send();
  });
};
