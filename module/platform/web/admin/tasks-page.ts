// Tasks page: failed tasks and stuck ones (processing longer than their timeout), each with attempts and last error;
// a failed task can be retried.
import type { FastifyInstance } from 'fastify';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** What the tasks page reaches: the queue, its operations and the clock. */
export type TasksPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'clock' | 'ops' | 'queue'>;

export function tasksPage(deps: TasksPageDeps, app: FastifyInstance): void {
  app.get('/tasks', async (request, reply) => {
    hasPermission(request, PERMISSION.tasks);
    const now = deps.clock.now().getTime();
    const failed = await deps.queue.list({ status: 'failed', limit: 200 });
    const processing = await deps.queue.list({ status: 'processing', limit: 500 });
    const stuck = processing.filter((t) => now - Date.parse(t.updatedAt) > t.options.timeout * 1000);
    return adminPage(deps, request, reply, 'tasks', { title: 'Tasks', failed, stuck }, { platform: 'tasks' });
  });

  app.post<{ Params: { id: string } }>('/tasks/:id/retry', async (request, reply) => {
    hasPermission(request, PERMISSION.tasks);
    const task = await deps.ops.retryTask(request.params.id);
    flash(deps, reply, `Task ${task.id} queued again.`);
    return reply.redirect('/admin/tasks', 303);
  });
}
