// Admin API: list task records by tag/status and retry a failed task.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError, UNKNOWN_TASK } from '../errors.ts';
import type { PlatformOperations } from '../operations.ts';
import type { TaskQueue } from '../../task/queue.ts';

const ListQuerySchema = z.object({
  tag: z.string().max(200).optional(),
  status: z.enum(['pending', 'processing', 'completed', 'failed', 'duplicate']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** `GET /api/admin/tasks`, `GET /api/admin/tasks/:id`, `POST /api/admin/tasks/:id/retry`. */
export const taskRoutes = ({ queue, ops }: { queue: TaskQueue; ops: PlatformOperations }): FastifyPluginAsyncZod => async (app) => {
  app.get('/tasks', { schema: { querystring: ListQuerySchema } }, async (request) => ({
    tasks: await queue.list({ tag: request.query.tag, status: request.query.status, limit: request.query.limit ?? 100 }),
  }));

  app.get('/tasks/:id', { schema: { params: z.object({ id: z.string().max(100) }) } }, async (request) => {
    const task = await queue.get(request.params.id);
    if (!task) throw new HttpError(404, UNKNOWN_TASK(request.params.id));
    return task;
  });

  app.post('/tasks/:id/retry', { schema: { params: z.object({ id: z.string().max(100) }) } }, async (request) => ops.retryTask(request.params.id));
};
