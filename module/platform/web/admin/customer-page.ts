// Admin customer detail: the customer's services with their recurring-billing state, invoices, credit balance and
// saved payment methods, and the actions on them: place an order for the customer, remove a saved method, cancel or
// resume a service's renewal (on the service page). Reading needs `customers` (billing parts also `billing`); acting
// needs `billing_actions`.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, UNKNOWN_PRODUCT } from '../../errors.ts';
import { productName } from '../../services/catalogue.ts';
import { formatMinor } from '../../services/billing/money.ts';
import { BILLING_CYCLES } from '../../services/billing/schema.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { billingAction } from './invoices-page.ts';

const Uuid = z.object({ uuid: z.string().max(64) });
const OrderForm = z.object({
  product_uuid: z.string().min(1).max(64),
  billing_cycle: z.enum(BILLING_CYCLES),
  username: z.string().trim().max(200).default(''),
  domain: z.string().trim().max(253).default(''),
});

/** What a customer's admin page reaches: billing, recurring billing, the catalogue and the services. */
export type CustomerPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'billing' | 'recurring' | 'catalogue' | 'products' | 'serviceAdmin'>;

export function customerPage(deps: CustomerPageDeps, app: FastifyInstance): void {
  const { billing, recurring } = deps;

  app.get<{ Params: { uuid: string } }>('/customers/:uuid', { schema: { params: Uuid } }, async (request, reply) => {
    hasPermission(request, PERMISSION.customers);
    const customer = await billing.customers.get(request.params.uuid);
    if (!customer) throw new HttpError(404, `customer not found: ${request.params.uuid}`);
    const admin = request.admin!;
    const seesBilling = admin.hasPermission(PERMISSION.billing);
    const services = await Promise.all((await billing.customers.serviceUuids(customer.uuid)).map(async (uuid) => {
      const s = await deps.serviceAdmin.describe(uuid);
      return {
        uuid, status: s.provision_status, username: String(s.service_data.username ?? ''), product: s.product ? productName(s.product) : s.module,
        billing: seesBilling ? await recurring.periods.view(uuid) : null,
      };
    }));
    const invoices = seesBilling ? await billing.listInvoices({ customer: customer.uuid }, 1, 20) : null;
    const credit = seesBilling ? await recurring.credit(customer.uuid) : null;
    const prices = await billing.listPrices();
    return adminPage(deps, request, reply, 'customer', {
      title: customer.email, customer: { uuid: customer.uuid, email: customer.email, name: customer.name, created_at: customer.created_at },
      services, sees_billing: seesBilling, can_act: admin.hasPermission(PERMISSION.billing_actions),
      invoices: invoices?.invoices ?? [], invoices_total: invoices?.total ?? 0,
      balances: credit ? Object.entries(credit.balances).map(([currency, minor]) => ({ currency, amount: formatMinor(minor, currency) })) : [],
      methods: seesBilling ? await recurring.methods.list(customer.uuid) : [],
      products: (await deps.catalogue.list()).filter((p) => prices.some((x) => x.product_uuid === p.uuid)).map((p) => ({ uuid: p.uuid, name: productName(p) })),
      cycles: BILLING_CYCLES,
    }, { platform: 'customers' });
  });

  app.post<{ Params: { uuid: string } }>('/customers/:uuid/orders', { schema: { params: Uuid } }, async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    const back = `/admin/customers/${request.params.uuid}`;
    return billingAction(deps, reply, back, async () => {
      const form = OrderForm.safeParse(request.body ?? {});
      if (!form.success) throw new HttpError(422, 'Choose a product and a billing cycle.');
      if (!(await deps.products.get(form.data.product_uuid))) throw new HttpError(404, UNKNOWN_PRODUCT(form.data.product_uuid));
      const data = Object.fromEntries((['username', 'domain'] as const).filter((k) => form.data[k] !== '').map((k) => [k, form.data[k]]));
      try {
        const placed = await billing.order({ customer_uuid: request.params.uuid, product_uuid: form.data.product_uuid, billing_cycle: form.data.billing_cycle, service_data: data });
        return `Order placed: invoice ${placed.invoice.number} (${placed.invoice.amount} ${placed.invoice.currency}).`;
      } catch (error) {
        const bag = error instanceof HttpError ? error.extra.errors : null;
        if (bag && typeof bag === 'object') {
          throw new HttpError(422, `The order was not placed: ${Object.entries(bag as Record<string, string[]>).map(([k, v]) => `${k}: ${[v].flat().join(' ')}`).join('; ')}`);
        }
        throw error;
      }
    });
  });

  app.post<{ Params: { uuid: string; method: string } }>('/customers/:uuid/payment-methods/:method/remove', {
    schema: { params: z.object({ uuid: z.string().max(64), method: z.string().max(64) }) },
  }, async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    return billingAction(deps, reply, `/admin/customers/${request.params.uuid}`, async () => {
      const removed = await recurring.methods.remove(request.params.uuid, request.params.method);
      return `${removed.label} removed: renewals are no longer charged to it.`;
    });
  });
}
