// Revenue figures for API clients: `GET /api/admin/revenue?months=` (the admin dashboard's report) and the platform's
// Prometheus text at `GET /metrics` (admin token): MRR, overdue amount, this month's net revenue, services started
// and ended this month.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { Gauge, Registry } from 'prom-client';
import { z } from 'zod';
import { majorUnits, type Revenue } from '../services/billing/revenue.ts';

/** `GET /revenue?months=1..60` (default 12). */
export const revenueRoutes = (revenue: () => Revenue): FastifyPluginAsyncZod => async (app) => {
  app.get('/revenue', { schema: { querystring: z.object({ months: z.coerce.number().int().min(1).max(60).default(12) }) } }, async (request) =>
    revenue().report(request.query.months),
  );
};

/** The Prometheus text of the revenue gauges (a fresh registry per scrape: the figures are read from the store). */
export async function revenueMetrics(revenue: Revenue): Promise<{ type: string; text: string }> {
  const registry = new Registry();
  const report = await revenue.report(1);
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const mrr = gauge('vpnhost_platform_mrr', 'Monthly recurring revenue of active and overdue subscriptions (currency units)', ['currency']);
  const subs = gauge('vpnhost_platform_subscriptions', 'Active and overdue subscriptions', ['currency']);
  const overdue = gauge('vpnhost_platform_overdue_amount', 'Unpaid and failed invoices past their due date (currency units)', ['currency']);
  const overdueCount = gauge('vpnhost_platform_overdue_invoices', 'Unpaid and failed invoices past their due date', ['currency']);
  const net = gauge('vpnhost_platform_revenue_month_net', 'Payments minus refunds of the current month (currency units)', ['currency']);
  const started = gauge('vpnhost_platform_services_new_month', 'Services created in the current month');
  const ended = gauge('vpnhost_platform_services_ended_month', 'Subscriptions cancelled or terminated in the current month');
  for (const m of report.mrr) {
    mrr.set({ currency: m.currency }, majorUnits(m.mrr_minor, m.currency));
    subs.set({ currency: m.currency }, m.subscriptions);
  }
  for (const o of report.overdue) {
    overdue.set({ currency: o.currency }, majorUnits(o.amount_minor, o.currency));
    overdueCount.set({ currency: o.currency }, o.invoices);
  }
  for (const [currency, r] of Object.entries(report.revenue)) net.set({ currency }, majorUnits(r.net_minor[0], currency));
  started.set(report.services_new[0]);
  ended.set(report.services_ended[0]);
  return { type: registry.contentType, text: await registry.metrics() };
}
