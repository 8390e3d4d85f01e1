// Admin API of recurring billing: settings (global, per product), the billing run (run now, dry run, history), a
// service's billing period, cancellation (and its undo) and prorated plan change, a customer's credit and saved methods.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TaskQueue } from '../../task/queue.ts';
import type { RecurringBilling } from '../services/billing/recurring-billing.ts';

const uuid = z.string().min(1).max(64);
const Params = z.object({ uuid });
const RunBody = z.object({
  dry_run: z.boolean().default(false),
  /** How long to wait for the run before answering 202 with its task (ms). */
  wait_ms: z.number().int().min(0).max(600_000).default(30_000),
}).nullish();

/**
 * `GET|PUT /billing/settings`, `GET|PUT /products/:uuid/billing-settings`, `POST /billing/run`, `GET /billing/runs`,
 * `GET /billing/runs/:id`, `GET|PATCH /services/:uuid/billing` (next_due_date), `POST|DELETE /services/:uuid/billing/cancel`,
 * `POST /services/:uuid/billing/change-plan`, `GET /customers/:uuid/credit`, `GET /customers/:uuid/payment-methods`,
 * `DELETE /customers/:uuid/payment-methods/:method`.
 */
export const recurringBillingRoutes = ({ recurring, queue }: { recurring: RecurringBilling; queue: TaskQueue }): FastifyPluginAsyncZod => async (app) => {
  app.get('/billing/settings', async () => recurring.settings());
  app.put('/billing/settings', { schema: { body: z.record(z.string(), z.unknown()) } }, async (request) => recurring.updateSettings(request.body));

  app.get('/products/:uuid/billing-settings', { schema: { params: Params } }, async (request) => recurring.productSettings(request.params.uuid));
  app.put('/products/:uuid/billing-settings', { schema: { params: Params, body: z.record(z.string(), z.unknown()) } }, async (request) =>
    recurring.updateProductSettings(request.params.uuid, request.body),
  );

  app.post('/billing/run', { schema: { body: RunBody } }, async (request, reply) => {
    const body = request.body ?? { dry_run: false, wait_ms: 30_000 };
    if (body.dry_run) return recurring.dryRun();
    const run = await recurring.runNow(queue, body.wait_ms);
    return reply.code(run.finished_at ? 200 : 202).send(run);
  });
  app.get('/billing/runs', { schema: { querystring: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }) } }, async (request) => ({
    runs: await recurring.runs(request.query.limit),
  }));
  app.get('/billing/runs/:id', { schema: { params: z.object({ id: z.coerce.number().int().positive() }) } }, async (request) => recurring.billingRun(request.params.id));

  app.get('/services/:uuid/billing', { schema: { params: Params } }, async (request) => recurring.service(request.params.uuid));
  app.patch('/services/:uuid/billing', { schema: { params: Params, body: z.object({ next_due_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }) } }, async (request) =>
    recurring.setNextDue(request.params.uuid, request.body.next_due_date),
  );
  app.post('/services/:uuid/billing/cancel', {
    schema: { params: Params, body: z.object({ when: z.enum(['period_end', 'immediate']).default('period_end') }).nullish() },
  }, async (request) => recurring.cancel(request.params.uuid, request.body?.when ?? 'period_end', 'admin'));
  app.delete('/services/:uuid/billing/cancel', { schema: { params: Params } }, async (request) => recurring.undoCancel(request.params.uuid, 'admin'));
  app.post('/services/:uuid/billing/change-plan', {
    schema: { params: Params, body: z.object({ product_uuid: uuid, dry_run: z.boolean().default(false) }) },
  }, async (request) => {
    if (!request.body.dry_run) return recurring.changePlan(request.params.uuid, request.body.product_uuid);
    const quote = await recurring.parts.planChanges.quote(request.params.uuid, request.body.product_uuid);
    return { service_uuid: request.params.uuid, from_product_uuid: quote.from, to_product_uuid: request.body.product_uuid, proration: quote.proration, dry_run: true };
  });

  app.get('/customers/:uuid/credit', { schema: { params: Params } }, async (request) => recurring.credit(request.params.uuid));
  app.get('/customers/:uuid/payment-methods', { schema: { params: Params } }, async (request) => ({ payment_methods: await recurring.methods.list(request.params.uuid) }));
  app.delete('/customers/:uuid/payment-methods/:method', { schema: { params: z.object({ uuid, method: uuid }) } }, async (request) =>
    recurring.methods.remove(request.params.uuid, request.params.method),
  );
};
