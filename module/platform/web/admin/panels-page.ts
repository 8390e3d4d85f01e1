// Panels page: every panel of the modules that manage panels (manifest `adminPanels`), read live — status, version,
// license, accounts used / available — and a form to add one (the module tests it first).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PanelHealth } from '../../extension.ts';
import { HttpError } from '../../errors.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** The panels of every module that manages some, with the module's name. */
export async function panelHealth(deps: Pick<WebDeps, 'modules'>): Promise<Array<PanelHealth & { module: string }>> {
  const sources = deps.modules.mounted().filter((m) => m.manifest.adminPanels);
  const lists = await Promise.all(sources.map(async (m) => (await m.manifest.adminPanels!(m.ext).health()).map((p) => ({ ...p, module: `${m.type}/${m.name}` }))));
  return lists.flat();
}

const PanelForm = z.object({
  module: z.string().max(100),
  name: z.string().trim().max(64).optional(),
  location: z.string().trim().min(1).max(64),
  api_url: z.string().trim().min(1).max(500),
  access_hash: z.string().trim().min(1).max(200),
});

/** What the panels page reaches: the admin page helpers and the mounted modules' panel sources. */
export type PanelsPageDeps = AdminPageDeps & FlashDeps;

export function panelsPage(deps: PanelsPageDeps, app: FastifyInstance): void {
  app.get('/panels', async (request, reply) => {
    hasPermission(request, PERMISSION.panels);
    const panels = await panelHealth(deps);
    const modules = deps.modules.mounted().filter((m) => m.manifest.adminPanels).map((m) => `${m.type}/${m.name}`);
    return adminPage(deps, request, reply, 'panels', { title: 'Panels', panels, modules }, { platform: 'panels' });
  });

  app.post('/panels', async (request, reply) => {
    hasPermission(request, PERMISSION.panels);
    const form = PanelForm.safeParse(request.body ?? {});
    if (!form.success) throw new HttpError(422, `invalid panel: ${form.error.issues[0].path.join('.')}: ${form.error.issues[0].message}`);
    const source = deps.modules.mounted().find((m) => `${m.type}/${m.name}` === form.data.module && m.manifest.adminPanels);
    if (!source) throw new HttpError(404, `no module ${form.data.module} manages panels`);
    try {
      await source.manifest.adminPanels!(source.ext).add({ name: form.data.name || undefined, location: form.data.location, api_url: form.data.api_url, access_hash: form.data.access_hash });
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 422) {
        flash(deps, reply, `Panel not added: ${(error as Error).message}`, 'error');
        return reply.redirect('/admin/panels', 303);
      }
      throw error;
    }
    flash(deps, reply, `Panel ${form.data.name || form.data.location} added.`);
    return reply.redirect('/admin/panels', 303);
  });
}
