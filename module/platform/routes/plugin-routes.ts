// Plugin admin routes: `/admin/modules/Plugin/<ModuleName>/<uri>` runs the matching adminWebRoutes / adminApiRoutes
// entry of the plugin (JSON for now; pages come with the web issue). Behind admin tokens.
import type { FastifyPluginAsync } from 'fastify';
import type { ModuleAdmin } from '../services/module-admin.ts';

/** Registered under the prefix `/admin/modules/Plugin`; resolved per request, so activate/deactivate apply at once. */
export const pluginRoutes = (admin: ModuleAdmin): FastifyPluginAsync => async (app) => {
  app.all<{ Params: { name: string; '*': string } }>('/:name/*', async (request, reply) => {
    const answer = await admin.pluginRoute(request.params.name, request.params['*'], {
      method: request.method,
      headers: { ...request.headers },
      query: { ...(request.query as Record<string, unknown>) },
      body: request.body ?? null,
      ip: request.ip,
    });
    reply.code(answer.status);
    for (const [key, value] of Object.entries(answer.headers ?? {})) reply.header(key, value);
    return reply.send(answer.body ?? null);
  });
};
