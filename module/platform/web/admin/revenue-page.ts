// Revenue at a glance: net revenue per month and currency (paid minus refunded), MRR, new and ended services per month
// and the overdue amount, as uPlot charts (served from the installed `uplot` package, drawn by assets/revenue-charts.js
// from the page's data attribute; the CSP allows no inline script) and the same figures as tables (no JavaScript needed).
// On the dashboard and at /admin/revenue; needs the `revenue` permission.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { formatMinor } from '../../services/billing/money.ts';
import { majorUnits, type RevenueReport } from '../../services/billing/revenue.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

/** The `dist` folder of the installed uPlot package, or null when it is not installed (charts are then left out). */
export function uplotDir(): string | null {
  try {
    const dir = join(dirname(createRequire(import.meta.url).resolve('uplot')), '');
    return existsSync(join(dir, 'uPlot.iife.min.js')) ? dir : null;
  } catch {
    return null;
  }
}

/** The report as the page shows it: a table row per month, and the charts' series in currency units. */
export function revenueView(report: RevenueReport, charts: boolean) {
  const rows = report.months.map((month, i) => ({
    month,
    money: report.currencies.filter((c) => report.revenue[c]).map((c) => ({
      currency: c, paid: formatMinor(report.revenue[c].paid_minor[i], c), refunded: formatMinor(report.revenue[c].refunded_minor[i], c), net: report.revenue[c].net[i],
    })),
    services_new: report.services_new[i], services_ended: report.services_ended[i],
  })).reverse();
  const data = {
    months: report.months,
    revenue: Object.fromEntries(Object.entries(report.revenue).map(([c, r]) => [c, r.net_minor.map((m) => majorUnits(m, c))])),
    services_new: report.services_new, services_ended: report.services_ended,
  };
  return { rows, mrr: report.mrr, overdue: report.overdue, charts, chart_data: JSON.stringify(data), currencies: report.currencies };
}

/** What the revenue page reaches: the revenue reports. */
export type RevenuePageDeps = AdminPageDeps & Pick<WebDeps, 'revenue'>;

export function revenuePage(deps: RevenuePageDeps, app: FastifyInstance): void {
  const charts = uplotDir() !== null;
  app.get('/revenue', async (request, reply) => {
    hasPermission(request, PERMISSION.revenue);
    const months = z.coerce.number().int().min(1).max(60).catch(12).parse((request.query as { months?: string }).months ?? 12);
    return adminPage(deps, request, reply, 'revenue', {
      title: 'Revenue', months, revenue: revenueView(await deps.revenue.report(months), charts),
    }, { platform: 'revenue' });
  });
}
