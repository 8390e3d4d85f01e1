// Client area "My invoices" and an invoice page: number, amount, currency, due date, status, and for an unpaid (or
// failed) invoice the payment form of each active Payment gateway (billing.paymentHtml → the module's
// getClientAreaHtml). Only the customer's own invoices: any other id answers 404 like one that does not exist.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { UNKNOWN_INVOICE, type InvoiceView, type TransactionView } from '../../services/billing/billing-service.ts';
import { clientPage, type ClientPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';

const Params = z.object({ uuid: z.string().max(64) });
const PAYMENT_UNAVAILABLE = 'Online payment is not available right now. Please contact us to pay this invoice.';

/** The invoice when the request's customer owns it; 404 otherwise (never telling whether it exists). */
async function ownedInvoice(deps: InvoiceRoutesDeps, request: FastifyRequest, uuid: string): Promise<InvoiceView & { transactions: TransactionView[] }> {
  let invoice: InvoiceView & { transactions: TransactionView[] };
  try {
    invoice = await deps.billing.invoice(uuid);
  } catch {
    throw new HttpError(404, UNKNOWN_INVOICE(uuid));
  }
  if (invoice.customer_uuid !== request.customer?.uuid) throw new HttpError(404, UNKNOWN_INVOICE(uuid));
  return invoice;
}

/** Gateway instances of the loaded Payment modules, in module then creation order. */
async function activeGateways(deps: InvoiceRoutesDeps): Promise<Array<{ uuid: string; label: string }>> {
  const payments = deps.modules.mounted().filter((m) => m.type === 'Payment');
  const instances = await Promise.all(payments.map((m) => deps.moduleInstances.list('Payment', m.name)));
  return instances.flat().map((g) => ({ uuid: g.uuid, label: g.label }));
}

/** The payment forms of every active gateway for an invoice; a gateway that fails to render is left out (logged). */
async function paymentForms(deps: InvoiceRoutesDeps, request: FastifyRequest, invoice: InvoiceView): Promise<Array<{ label: string; html: string }>> {
  const here = `${request.protocol}://${request.host}/client/invoices/${invoice.uuid}`;
  const forms: Array<{ label: string; html: string }> = [];
  for (const gateway of await activeGateways(deps)) {
    try {
      forms.push({ label: gateway.label, html: await deps.billing.paymentHtml(invoice.uuid, gateway.uuid, { return_url: `${here}?paid=1`, cancel_url: here }) });
    } catch (error) {
      request.log.warn({ gateway: gateway.uuid, invoice: invoice.uuid, err: (error as Error).message }, 'client area: payment form not rendered');
    }
  }
  return forms;
}

/** The service's tab where the customer connects (a tab whose key or name says connect; else the first tab). */
async function connectHref(deps: InvoiceRoutesDeps, serviceUuid: string): Promise<string> {
  try {
    const menu = (await deps.serviceAdmin.productForService(serviceUuid)).getClientAreaMenuConfig();
    const key = Object.keys(menu).find((k) => /connect/i.test(k) || /connect/i.test(menu[k].name)) ?? Object.keys(menu)[0];
    return key ? `/client/services/${serviceUuid}?tab=${encodeURIComponent(key)}` : `/client/services/${serviceUuid}`;
  } catch {
    return `/client/services/${serviceUuid}`;
  }
}

/** What the client's invoice routes reach: billing (invoices, gateways), the module instances and the services. */
export type InvoiceRoutesDeps = ClientPageDeps & Pick<WebDeps, 'billing' | 'moduleInstances' | 'modules' | 'serviceAdmin'>;

export function invoiceRoutes(deps: InvoiceRoutesDeps, area: FastifyInstance): void {
  area.get('/invoices', async (request, reply) => {
    const { invoices } = await deps.billing.listInvoices({ customer: request.customer!.uuid }, 1, 200);
    return clientPage(deps, request, reply, 'invoices', { title: 'My invoices', invoices });
  });

  area.get<{ Params: { uuid: string }; Querystring: { paid?: string } }>('/invoices/:uuid', { schema: { params: Params } }, async (request, reply) => {
    const invoice = await ownedInvoice(deps, request, request.params.uuid);
    const payable = invoice.status === 'unpaid' || invoice.status === 'failed';
    const payments = payable ? await paymentForms(deps, request, invoice) : [];
    const failure = invoice.status === 'failed' ? invoice.transactions.filter((t) => t.kind === 'failure').at(-1) : undefined;
    return clientPage(deps, request, reply, 'invoice', {
      title: `Invoice ${invoice.number}`, invoice, payable, payments,
      unavailable: payable && payments.length === 0 ? PAYMENT_UNAVAILABLE : null,
      returned: payable && request.query.paid === '1',
      declined: failure ? failure.note || 'The payment was declined.' : null,
      thanks: invoice.status === 'paid' ? { connect: invoice.service_uuid ? await connectHref(deps, invoice.service_uuid) : null } : null,
    });
  });
}
