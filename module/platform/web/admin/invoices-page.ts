// Admin billing pages: invoices (filter by status, customer, creation day; paged), an invoice with its transactions,
// a manual payment and refunds (full or partial; a gateway payment is refunded through its gateway), and orders.
// Reading needs `billing`, acting `billing_actions`; every form is a plain POST (no JavaScript).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { productName } from '../../services/catalogue.ts';
import { formatMinor } from '../../services/billing/money.ts';
import { INVOICE_STATUSES } from '../../services/billing/schema.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { pager } from './services-page.ts';

const PER_PAGE = 50;
const DAY = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const InvoiceQuery = z.object({
  status: z.enum(INVOICE_STATUSES).optional().catch(undefined),
  customer: z.string().trim().max(254).optional().catch(undefined),
  from: DAY.optional().catch(undefined),
  to: DAY.optional().catch(undefined),
  page: z.coerce.number().int().min(1).max(1_000_000).catch(1).default(1),
});
const PaymentForm = z.object({ reference: z.string().trim().max(200).default(''), note: z.string().trim().max(500).default('') });
const RefundForm = z.object({ amount: z.string().trim().max(32).default('') });
const Uuid = z.object({ uuid: z.string().max(64) });

/** Runs an admin billing action: a notice of its outcome (a 4xx/502 refusal as an error notice), then back to `to`. */
export async function billingAction(deps: FlashDeps, reply: FastifyReply, to: string, run: () => Promise<string>): Promise<FastifyReply> {
  try {
    flash(deps, reply, await run());
  } catch (error) {
    if (!(error instanceof HttpError) || (error.statusCode >= 500 && error.statusCode !== 502)) throw error;
    flash(deps, reply, error.message, 'error');
  }
  return reply.redirect(to, 303);
}

/** What the invoices pages reach: billing (invoices, payments, refunds, orders) and the products' names. */
export type InvoicesPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'billing' | 'products'>;

export function invoicesPage(deps: InvoicesPageDeps, app: FastifyInstance): void {
  const billing = deps.billing;
  const customers = billing.customers;
  const emailOf = new Map<string, string>();
  const email = async (uuid: string | null) => {
    if (!uuid) return '';
    let known = emailOf.get(uuid);
    if (known === undefined) {
      known = (await customers.get(uuid))?.email ?? uuid;
      if (emailOf.size > 10_000) emailOf.clear();
      emailOf.set(uuid, known);
    }
    return known;
  };

  app.get('/invoices', async (request, reply) => {
    hasPermission(request, PERMISSION.billing);
    const query = InvoiceQuery.parse(request.query ?? {});
    // The customer filter takes an e-mail address or a customer's uuid.
    const who = query.customer ? (query.customer.includes('@') ? (await customers.findByEmail(query.customer.toLowerCase()))?.uuid ?? '-' : query.customer) : undefined;
    const list = await billing.listInvoices({ status: query.status, customer: who, from: query.from, to: query.to }, query.page, PER_PAGE);
    return adminPage(deps, request, reply, 'invoices', {
      title: 'Invoices', query,
      statuses: INVOICE_STATUSES.map((s) => ({ s, selected: s === query.status })),
      invoices: await Promise.all(list.invoices.map(async (i) => ({ ...i, customer: await email(i.customer_uuid) }))),
      pager: pager('/admin/invoices', { ...query }, query.page, PER_PAGE, list.total),
    }, { platform: 'invoices' });
  });

  app.get<{ Params: { uuid: string } }>('/invoices/:uuid', { schema: { params: Uuid } }, async (request, reply) => {
    hasPermission(request, PERMISSION.billing);
    const invoice = await billing.invoice(request.params.uuid);
    const customer = invoice.customer_uuid ? (await customers.get(invoice.customer_uuid)) ?? null : null;
    const can = request.admin!.hasPermission(PERMISSION.billing_actions);
    return adminPage(deps, request, reply, 'invoice', {
      title: `Invoice ${invoice.number}`, invoice, customer, can_act: can,
      payable: can && (invoice.status === 'unpaid' || invoice.status === 'failed'),
      transactions: invoice.transactions.map((t) => ({
        ...t, refundable: can && t.kind === 'payment' && t.amount_minor > t.refunded_minor,
        left: formatMinor(t.amount_minor - t.refunded_minor, t.currency), refunded: formatMinor(t.refunded_minor, t.currency),
      })),
    }, { platform: 'invoices' });
  });

  app.post<{ Params: { uuid: string } }>('/invoices/:uuid/payments', { schema: { params: Uuid } }, async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    const form = PaymentForm.parse(request.body ?? {});
    return billingAction(deps, reply, `/admin/invoices/${request.params.uuid}`, async () => {
      const paid = await billing.payManually(request.params.uuid, form.reference || undefined, form.note || undefined);
      return `Invoice ${paid.number} marked paid (manual payment).`;
    });
  });

  app.post<{ Params: { uuid: string } }>('/transactions/:uuid/refund', { schema: { params: Uuid } }, async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    const form = RefundForm.parse(request.body ?? {});
    const payment = await deps.billing.ledger.transaction(request.params.uuid);
    const back = payment ? `/admin/invoices/${payment.invoice_uuid}` : '/admin/invoices';
    return billingAction(deps, reply, back, async () => {
      if (!payment) throw new HttpError(404, `transaction not found: ${request.params.uuid}`);
      await billing.refund(payment.uuid, form.amount || undefined);
      const after = await billing.invoice(payment.invoice_uuid);
      return `Refunded ${form.amount || 'the rest'} ${payment.currency}: invoice ${after.number} is ${after.status}, ${after.refunded} refunded.`;
    });
  });

  app.get('/orders', async (request, reply) => {
    hasPermission(request, PERMISSION.billing);
    const page = z.coerce.number().int().min(1).catch(1).parse((request.query as { page?: string }).page ?? 1);
    const list = await billing.listOrders(page, PER_PAGE);
    const orders = await Promise.all(list.orders.map(async (o) => {
      const product = await deps.products.get(o.product_uuid);
      return { ...o, customer: await email(o.customer_uuid), product: product ? productName(product) : o.product_uuid };
    }));
    return adminPage(deps, request, reply, 'orders', { title: 'Orders', orders, pager: pager('/admin/orders', {}, page, PER_PAGE, list.total) }, { platform: 'orders' });
  });
}
