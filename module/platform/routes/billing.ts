// Admin API of billing: prices per product and cycle, refund policy, orders, invoices, manual payments, payment
// sessions of a gateway, refunds; customers (create, list) for orders placed by an admin.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../errors.ts';
import type { BillingService } from '../services/billing/billing-service.ts';
import { BILLING_CYCLES, INVOICE_STATUSES, REFUND_ACTIONS } from '../services/billing/schema.ts';
import { pageQuerySchema } from './services.ts';

const uuid = z.string().min(1).max(64);
const amount = z.union([z.string().trim().max(32), z.number().nonnegative()]);
const email = z.string().trim().toLowerCase().pipe(z.email()).refine((v) => v.length <= 254, 'too long');
const ProductCycle = z.object({ uuid, cycle: z.enum(BILLING_CYCLES) });
const OrderBody = z.object({
  customer_uuid: uuid.optional(),
  customer: z.object({ email, name: z.string().trim().max(200).optional() }).optional(),
  product_uuid: uuid,
  billing_cycle: z.enum(BILLING_CYCLES),
  service_data: z.record(z.string(), z.unknown()),
});
const InvoiceQuery = pageQuerySchema.extend({
  status: z.enum(INVOICE_STATUSES).optional(),
  customer: uuid.optional(),
  service: uuid.optional(),
  from: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
  to: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional(),
});
const url = z.url().max(2000);

/**
 * `GET /prices?product=`, `PUT|DELETE /products/:uuid/prices/:cycle`, `GET|PUT /products/:uuid/refund-policy`,
 * `POST /orders`, `GET /invoices?status=&customer=&service=&from=&to=&page=&per_page=`, `GET /orders`, `GET /invoices/:uuid`,
 * `POST /invoices/:uuid/payments` (manual), `POST /invoices/:uuid/payment-session`, `POST /transactions/:uuid/refund`,
 * `POST|GET /customers`.
 */
export const billingRoutes = (billing: BillingService): FastifyPluginAsyncZod => async (app) => {
  const customers = billing.customers;
  app.get('/prices', { schema: { querystring: z.object({ product: uuid.optional() }) } }, async (request) => ({ prices: await billing.listPrices(request.query.product) }));

  app.put('/products/:uuid/prices/:cycle', { schema: { params: ProductCycle, body: z.object({ amount, currency: z.string().max(8) }) } }, async (request) =>
    billing.setPrice(request.params.uuid, request.params.cycle, request.body.amount, request.body.currency),
  );

  app.delete('/products/:uuid/prices/:cycle', { schema: { params: ProductCycle } }, async (request) => {
    if (!(await billing.deletePrice(request.params.uuid, request.params.cycle))) throw new HttpError(404, `no price for ${request.params.uuid} ${request.params.cycle}`);
    return { deleted: true };
  });

  app.get('/products/:uuid/refund-policy', { schema: { params: z.object({ uuid }) } }, async (request) => billing.refundPolicy(request.params.uuid));

  app.put('/products/:uuid/refund-policy', { schema: { params: z.object({ uuid }), body: z.object({ refund_action: z.enum(REFUND_ACTIONS) }) } }, async (request) =>
    billing.setRefundPolicy(request.params.uuid, request.body.refund_action),
  );

  app.post('/orders', { schema: { body: OrderBody } }, async (request, reply) => reply.code(201).send(await billing.order(request.body)));

  app.get('/invoices', { schema: { querystring: InvoiceQuery } }, async (request) => {
    const { page, per_page, ...filter } = request.query;
    return billing.listInvoices(filter, page, per_page);
  });

  app.get('/orders', { schema: { querystring: pageQuerySchema } }, async (request) => billing.listOrders(request.query.page, request.query.per_page));

  app.get('/invoices/:uuid', { schema: { params: z.object({ uuid }) } }, async (request) => billing.invoice(request.params.uuid));

  app.post('/invoices/:uuid/payments', {
    schema: { params: z.object({ uuid }), body: z.object({ reference: z.string().trim().max(200).optional(), note: z.string().trim().max(500).optional() }).nullish() },
  }, async (request) => billing.payManually(request.params.uuid, request.body?.reference, request.body?.note));

  app.post('/invoices/:uuid/payment-session', {
    schema: { params: z.object({ uuid }), body: z.object({ gateway_uuid: uuid, return_url: url, cancel_url: url }) },
  }, async (request) => ({ html: await billing.paymentHtml(request.params.uuid, request.body.gateway_uuid, request.body) }));

  app.post('/transactions/:uuid/refund', { schema: { params: z.object({ uuid }), body: z.object({ amount: amount.optional() }).nullish() } }, async (request) =>
    billing.refund(request.params.uuid, request.body?.amount),
  );

  app.post('/customers', { schema: { body: z.object({ email, name: z.string().trim().max(200).optional() }) } }, async (request, reply) => {
    if (await customers.findByEmail(request.body.email)) throw new HttpError(409, `customer exists: ${request.body.email}`);
    return reply.code(201).send(await customers.create(request.body));
  });

  app.get('/customers', { schema: { querystring: pageQuerySchema } }, async (request) => ({
    customers: await customers.list(request.query.per_page, (request.query.page - 1) * request.query.per_page),
  }));
};
