// Modules page: every module with a config.ts section, its state and version; activate / deactivate / update with the
// module's own `success` / `Error: ...` answer shown.
import type { FastifyInstance } from 'fastify';
import { LIFECYCLE_ACTIONS, type LifecycleAction } from '../../services/module-admin.ts';
import { HttpError } from '../../errors.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** What the modules page reaches: the module admin and the module versions. */
export type ModulesPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'moduleAdmin' | 'versions'>;

export function modulesPage(deps: ModulesPageDeps, app: FastifyInstance): void {
  app.get('/modules', async (request, reply) => {
    hasPermission(request, PERMISSION.modules);
    // Versions another platform process recorded since this one loaded them.
    await deps.versions.refresh();
    const modules = (await deps.moduleAdmin.list()).map((m) => ({ ...m, key: `${m.type}/${m.name}` }));
    return adminPage(deps, request, reply, 'modules', { title: 'Modules', modules }, { platform: 'modules' });
  });

  app.post<{ Params: { type: string; name: string; action: string } }>('/module-actions/:type/:name/:action', async (request, reply) => {
    hasPermission(request, PERMISSION.modules);
    const { type, name, action } = request.params;
    if (!(LIFECYCLE_ACTIONS as readonly string[]).includes(action)) throw new HttpError(404, `unknown module action: ${action}`);
    const answer = await deps.moduleAdmin.lifecycle(type, name, action as LifecycleAction);
    flash(deps, reply, `${answer.module} ${action}: ${answer.result}`, answer.result === 'success' ? 'ok' : 'error');
    return reply.redirect('/admin/modules', 303);
  });
}
