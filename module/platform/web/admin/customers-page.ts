// Customers page: the paged list with each customer's services, and a form creating a customer with a password.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { pager } from './services-page.ts';

const PER_PAGE = 50;
const CustomerForm = z.object({ email: z.string().max(200).default(''), name: z.string().max(200).default(''), password: z.string().max(1000).default('') });

/** What the customers list reaches: the customer accounts and billing's customer records. */
export type CustomersPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'billing' | 'customers'>;

export function customersPage(deps: CustomersPageDeps, app: FastifyInstance): void {
  app.get<{ Querystring: { page?: string } }>('/customers', async (request, reply) => {
    hasPermission(request, PERMISSION.customers);
    const page = Math.max(1, Number(request.query.page) || 1);
    const repo = deps.billing.customers;
    const total = await repo.count();
    const customers = await Promise.all((await repo.list(PER_PAGE, (page - 1) * PER_PAGE)).map(async (c) => ({ ...c, services: await repo.serviceUuids(c.uuid) })));
    return adminPage(deps, request, reply, 'customers', { title: 'Customers', customers, pager: pager('/admin/customers', {}, page, PER_PAGE, total) }, { platform: 'customers' });
  });

  app.post('/customers', async (request, reply) => {
    hasPermission(request, PERMISSION.customers);
    const form = CustomerForm.parse(request.body ?? {});
    const customer = await deps.customers.create(form);
    flash(deps, reply, `Customer ${customer.email} created.`);
    return reply.redirect('/admin/customers', 303);
  });
}
