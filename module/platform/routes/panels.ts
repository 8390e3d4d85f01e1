// Admin API: register panels (connection tested first) and list them without their access hashes.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Platform } from '../platform.ts';

const PanelBodySchema = z.object({
  location: z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, `_`, `.`, `-`'),
  api_url: z.url({ protocol: /^https?$/ }),
  access_hash: z.string().min(1).max(200),
});

/** `POST /api/admin/panels`, `GET /api/admin/panels`. */
export const panelRoutes = (platform: Platform): FastifyPluginAsyncZod => async (app) => {
  app.post('/panels', { schema: { body: PanelBodySchema } }, async (request, reply) => {
    const panel = await platform.ops.registerPanel(request.body);
    return reply.code(201).send(panel);
  });

  app.get('/panels', async () => ({ panels: platform.panels.list() }));
};
