// Client area "Order a plan": the products that have a price (per billing cycle), and the order form whose POST places
// the order for the logged-in customer through the billing service (pending service + unpaid invoice), then shows
// the invoice.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { BILLING_CYCLES } from '../../services/billing/schema.ts';
import { clientPage, flash } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';

const OrderForm = z.object({
  product_uuid: z.string().min(1).max(64),
  billing_cycle: z.enum(BILLING_CYCLES),
  username: z.string().trim().max(200).default(''),
  domain: z.string().trim().max(253).default(''),
});

/** The service fields the form offers (the product's module validates them); empty ones are left out. */
const SERVICE_FIELDS = ['username', 'domain'] as const;

/** A product on offer: its description and its prices, one per billing cycle. */
export interface OfferView {
  uuid: string;
  module: string;
  plan: string;
  location: string;
  prices: Array<{ cycle: string; amount: string; currency: string }>;
}

/** The products with at least one price whose Product module is loaded, in catalogue order; cycles shortest first. */
export function offers(deps: WebDeps): OfferView[] {
  const prices = deps.platform.billing.listPrices();
  return deps.platform.products.list()
    .filter((product) => deps.platform.modules.has('Product', product.module))
    .map((product) => ({
      uuid: product.uuid, module: product.module,
      plan: String(product.product_data.plan_type ?? ''), location: String(product.product_data.server_location ?? ''),
      prices: prices.filter((p) => p.product_uuid === product.uuid)
        .sort((a, b) => BILLING_CYCLES.indexOf(a.billing_cycle) - BILLING_CYCLES.indexOf(b.billing_cycle))
        .map((p) => ({ cycle: p.billing_cycle, amount: p.amount, currency: p.currency })),
    }))
    .filter((offer) => offer.prices.length > 0);
}

/** ` (field: message; …)` of a module's error bag, or nothing. */
function fieldErrors(bag: unknown): string {
  if (!bag || typeof bag !== 'object') return '';
  const parts = Object.entries(bag as Record<string, unknown>).map(([field, messages]) => `${field}: ${[messages].flat().join(', ')}`);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

export function orderRoutes(deps: WebDeps, area: FastifyInstance): void {
  area.get('/order', async (request, reply) => clientPage(deps, request, reply, 'order', { title: 'Order a plan', offers: offers(deps) }));

  area.post('/order', async (request, reply) => {
    const parsed = OrderForm.safeParse(request.body ?? {});
    if (!parsed.success) {
      flash(deps, reply, 'Choose a plan and a billing cycle.', 'error');
      return reply.redirect('/client/order', 303);
    }
    const form = parsed.data;
    try {
      const placed = await deps.platform.billing.order({
        customer_uuid: request.customer!.uuid, product_uuid: form.product_uuid, billing_cycle: form.billing_cycle,
        service_data: Object.fromEntries(SERVICE_FIELDS.filter((key) => form[key] !== '').map((key) => [key, form[key]])),
      });
      flash(deps, reply, `Order placed: invoice ${placed.invoice.number}.`);
      return reply.redirect(`/client/invoices/${placed.invoice.uuid}`, 303);
    } catch (error) {
      if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
      flash(deps, reply, `The order was not placed: ${error.message}${fieldErrors(error.extra.errors)}`, 'error');
      return reply.redirect('/client/order', 303);
    }
  });
}
