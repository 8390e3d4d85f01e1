// Client area "Order a plan": the visible products that have a price (by position), each with its name, description,
// prices per billing cycle and only the service fields its module asks for; the POST places the order for the
// logged-in customer through the billing service (pending service + unpaid invoice) and shows the invoice. A refused
// order shows the page again with the module's messages at each field and what the customer typed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Product } from '../../../contract/product.ts';
import { HttpError } from '../../errors.ts';
import { productName } from '../../services/catalogue.ts';
import { BILLING_CYCLES } from '../../services/billing/schema.ts';
import { formFields, otherErrors, type FormField } from '../admin/form-errors.ts';
import { clientPage, flash, type FlashDeps, type ClientPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';

const OrderForm = z.object({
  product_uuid: z.string().min(1).max(64),
  billing_cycle: z.enum(BILLING_CYCLES),
});

/** The customer-facing service fields the platform's order form can offer; the product's module keeps the ones it uses. */
const CUSTOMER_FIELDS = ['username', 'domain'] as const;

/** A product on offer: its name, description, prices (one per billing cycle) and the fields its module asks for. */
export interface OfferView {
  uuid: string;
  module: string;
  name: string;
  description: string;
  prices: Array<{ cycle: string; amount: string; currency: string; checked: boolean }>;
  fields: FormField[];
  errors: string[];
}

/** The service fields the module of a product asks a customer for: those its getServiceData keeps. */
function customerFields(module: Product): string[] {
  const kept = module.getServiceData(Object.fromEntries(CUSTOMER_FIELDS.map((f) => [f, 'x'])));
  return CUSTOMER_FIELDS.filter((f) => f in kept);
}

interface Refusal {
  product_uuid: string;
  billing_cycle: string;
  values: Record<string, string>;
  bag: Record<string, string[]>;
}

/** The visible products with at least one price whose Product module is loaded, by position; cycles shortest first. */
async function offers(deps: OrderRoutesDeps, refusal: Refusal | null = null): Promise<OfferView[]> {
  const prices = await deps.billing.listPrices();
  return (await deps.products.list())
    .filter((product) => product.visible && deps.modules.has('Product', product.module))
    .map((product) => {
      const mine = refusal?.product_uuid === product.uuid ? refusal : null;
      const names = customerFields(deps.modules.instance<Product>('Product', product.module));
      const own = prices.filter((p) => p.product_uuid === product.uuid)
        .sort((a, b) => BILLING_CYCLES.indexOf(a.billing_cycle) - BILLING_CYCLES.indexOf(b.billing_cycle));
      const chosen = own.some((p) => p.billing_cycle === mine?.billing_cycle) ? mine!.billing_cycle : own[0]?.billing_cycle;
      return {
        uuid: product.uuid, module: product.module, name: productName(product), description: product.description,
        prices: own.map((p) => ({ cycle: p.billing_cycle, amount: p.amount, currency: p.currency, checked: p.billing_cycle === chosen })),
        fields: formFields(names, mine?.values ?? {}, mine?.bag ?? null),
        errors: mine ? otherErrors(names, mine.bag) : [],
      };
    })
    .filter((offer) => offer.prices.length > 0);
}

async function orderPage(deps: OrderRoutesDeps, request: FastifyRequest, reply: FastifyReply, refusal: Refusal | null) {
  const list = await offers(deps, refusal);
  // A refusal of a product not on the page (no price, hidden) is shown above the offers.
  const general = refusal && !list.some((o) => o.uuid === refusal.product_uuid) ? otherErrors([], refusal.bag) : [];
  return clientPage(deps, request, reply, 'order', { title: 'Order a plan', offers: list, refused: refusal !== null, general }, refusal ? 422 : 200);
}

/** What the client's order routes reach: billing, the products and the Product modules. */
export type OrderRoutesDeps = ClientPageDeps & FlashDeps & Pick<WebDeps, 'billing' | 'modules' | 'products'>;

export function orderRoutes(deps: OrderRoutesDeps, area: FastifyInstance): void {
  area.get('/order', async (request, reply) => orderPage(deps, request, reply, null));

  area.post('/order', async (request, reply) => {
    const parsed = OrderForm.safeParse(request.body ?? {});
    if (!parsed.success) {
      flash(deps, reply, 'Choose a plan and a billing cycle.', 'error');
      return reply.redirect('/client/order', 303);
    }
    const form = parsed.data;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const product = await deps.products.get(form.product_uuid);
    const names = product && product.visible && deps.modules.has('Product', product.module)
      ? customerFields(deps.modules.instance<Product>('Product', product.module)) : [];
    const values = Object.fromEntries(names.map((key) => [key, String(body[key] ?? '').trim().slice(0, 253)]));
    try {
      if (!product || !product.visible) throw new HttpError(404, 'This plan is not on offer.');
      const placed = await deps.billing.order({
        customer_uuid: request.customer!.uuid, product_uuid: form.product_uuid, billing_cycle: form.billing_cycle,
        service_data: Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '')),
      });
      flash(deps, reply, `Order placed: invoice ${placed.invoice.number}.`);
      return reply.redirect(`/client/invoices/${placed.invoice.uuid}`, 303);
    } catch (error) {
      if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
      const bag = error.extra.errors && typeof error.extra.errors === 'object' ? (error.extra.errors as Record<string, string[]>) : { _: [error.message] };
      return orderPage(deps, request, reply, { product_uuid: form.product_uuid, billing_cycle: form.billing_cycle, values, bag });
    }
  });
}
