// Dashboard: services by provision status, the latest failed tasks, panel health from the modules that manage panels.
import type { FastifyInstance } from 'fastify';
import { PROVISION_STATUSES } from '../../../contract/provision-status.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { panelHealth } from './panels-page.ts';
import { revenueView, uplotDir } from './revenue-page.ts';

/** What the dashboard reaches: the queue, revenue, services and the panels' health. */
export type DashboardPageDeps = AdminPageDeps & Pick<WebDeps, 'queue' | 'revenue' | 'services'>;

export function dashboardPage(deps: DashboardPageDeps, app: FastifyInstance): void {
  app.get('/', async (request, reply) => {
    if (!request.admin!.hasPermission(PERMISSION.dashboard)) {
      // An admin without the dashboard lands on the first page they may see.
      hasPermission(request, PERMISSION.dashboard);
    }
    const counts = await deps.services.countByStatus();
    const byStatus = PROVISION_STATUSES.map((status) => ({ status, count: counts[status] ?? 0 }));
    const failed = await deps.queue.list({ status: 'failed', limit: 10 });
    const panels = request.admin!.hasPermission(PERMISSION.panels) ? await panelHealth(deps) : null;
    const revenue = request.admin!.hasPermission(PERMISSION.revenue) ? revenueView(await deps.revenue.report(12), uplotDir() !== null) : null;
    return adminPage(deps, request, reply, 'dashboard', {
      title: 'Dashboard', byStatus, total: byStatus.reduce((n, s) => n + s.count, 0), failed, panels, revenue,
    }, { platform: 'dashboard' });
  });
}
