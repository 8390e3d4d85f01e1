// Admin API: list task records by tag/status and retry a failed task.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError, UNKNOWN_TASK } from '../errors.ts';
import type { Platform } from '../platform.ts';

const ListQuerySchema = z.object({
  tag: z.string().max(200).optional(),
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'duplicate']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** `GET /api/admin/tasks`, `GET /api/admin/tasks/:id`, `POST /api/admin/tasks/:id/retry`. */
export const taskRoutes = (platform: Platform): FastifyPluginAsyncZod => async (app) => {
  app.get('/tasks', { schema: { querystring: ListQuerySchema } }, async (request) => ({
    tasks: await platform.queue.list({ tag: request.query.tag, status: request.query.status, limit: request.query.limit ?? 100 }),
  }));

  app.get('/tasks/:id', { schema: { params: z.object({ id: z.string().max(100) }) } }, async (request) => {
    const task = await platform.queue.get(request.params.id);
    if (!task) throw new HttpError(404, UNKNOWN_TASK(request.params.id));
    return task;
  });

  app.post('/tasks/:id/retry', { schema: { params: z.object({ id: z.string().max(100) }) } }, async (request) => platform.ops.retryTask(request.params.id));
};
