// Admin API of the module host: list modules, activate/deactivate/update them, drop their cache, manage Payment
// gateway and Notification channel instances (module_data sealed, secrets never answered), read the module log.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LOG_LEVELS } from '../../contract/log.ts';
import { PROVISION_STATUSES } from '../../contract/provision-status.ts';
import { HttpError } from '../errors.ts';
import { LIFECYCLE_ACTIONS, type ModuleAdmin } from '../services/module-admin.ts';
import type { ModuleLogQueries } from '../services/module-log-query.ts';
import { pageQuerySchema } from './services.ts';

const name = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/);
const ModuleParams = z.object({ type: z.enum(['Product', 'Plugin', 'Payment', 'Notification']), name });
const LifecycleParams = ModuleParams.extend({ action: z.string().max(64) });
const InstanceParams = z.object({ uuid: z.string().min(1).max(64) });
const label = z.string().trim().min(1).max(200);
const moduleData = z.record(z.string(), z.unknown());
const LogQuerySchema = pageQuerySchema.extend({
  type: z.enum(['Product', 'Plugin', 'Payment', 'Notification']).optional(),
  module: name.optional(),
  level: z.enum(LOG_LEVELS).optional(),
  service: z.string().min(1).max(64).optional(),
  status: z.enum(PROVISION_STATUSES).optional(),
  product: z.string().min(1).max(64).optional(),
  location: z.string().min(1).max(64).optional(),
  q: z.string().max(200).optional(),
});

/**
 * `GET /modules`; `POST /modules/:type/:name/activate|deactivate|update` (200 `{result:'success'}`, or 422 with
 * `error` = the module's `Error: ...` answer); `DELETE /modules/:type/:name/cache`; `POST|GET /modules/:type/:name/instances`;
 * `GET|PUT /module-instances/:uuid`; `GET /module-logs?type=&module=&level=&service=&status=&product=&location=&q=&page=&per_page=`.
 */
export const moduleRoutes = ({ moduleAdmin: admin, moduleLogs: logs }: { moduleAdmin: ModuleAdmin; moduleLogs: ModuleLogQueries }): FastifyPluginAsyncZod => async (app) => {
  app.get('/modules', async () => ({ modules: await admin.list() }));

  app.post('/modules/:type/:name/:action', { schema: { params: LifecycleParams } }, async (request) => {
    const { type, name: moduleName, action } = request.params;
    if (!(LIFECYCLE_ACTIONS as readonly string[]).includes(action)) throw new HttpError(404, `unknown module action: ${action} (one of activate, deactivate, update)`);
    const answer = await admin.lifecycle(type, moduleName, action as (typeof LIFECYCLE_ACTIONS)[number]);
    if (answer.result !== 'success') throw new HttpError(422, answer.result, { module: answer.module, action: answer.action, result: answer.result });
    return answer;
  });

  app.delete('/modules/:type/:name/cache', { schema: { params: ModuleParams } }, async (request) => admin.invalidateCache(request.params.name));

  app.post('/modules/:type/:name/instances', { schema: { params: ModuleParams, body: z.object({ label, module_data: moduleData }) } }, async (request, reply) =>
    reply.code(201).send(await admin.createInstance(request.params.type, request.params.name, request.body.label, request.body.module_data)),
  );

  app.get('/modules/:type/:name/instances', { schema: { params: ModuleParams } }, async (request) => ({
    instances: await admin.listInstances(request.params.type, request.params.name),
  }));

  app.get('/module-instances/:uuid', { schema: { params: InstanceParams } }, async (request) => admin.getInstance(request.params.uuid));

  app.put('/module-instances/:uuid', { schema: { params: InstanceParams, body: z.object({ label: label.optional(), module_data: moduleData.optional() }) } }, async (request) =>
    await admin.updateInstance(request.params.uuid, request.body),
  );

  app.get('/module-logs', { schema: { querystring: LogQuerySchema } }, async (request) => logs.list(request.query));
};
