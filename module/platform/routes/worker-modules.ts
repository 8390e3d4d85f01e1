// Worker API of the module host: a gateway/channel instance with its module_data opened, for a remote worker's
// Payment and Notification jobs (worker tokens only; never logged).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../errors.ts';
import { UNKNOWN_GATEWAY } from '../services/module-admin.ts';
import type { ModuleInstanceStore } from '../services/module-store.ts';

/** `GET /api/worker/module-instances/:uuid`. */
export const workerModuleRoutes = (instances: ModuleInstanceStore): FastifyPluginAsyncZod => async (app) => {
  app.get('/module-instances/:uuid', { schema: { params: z.object({ uuid: z.string().min(1).max(64) }) } }, async (request) => {
    const found = await instances.get(request.params.uuid);
    if (!found) throw new HttpError(404, UNKNOWN_GATEWAY(request.params.uuid));
    return found;
  });
};
