// Services: the paged list with filters, a new-service form (the module's 422 bag at each field), the detail page
// (the module's getServicePage(), owner, lifecycle actions behind a confirmation page, task history, module log).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { PROVISION_ACTIONS, PROVISION_STATUSES } from '../../../contract/provision-status.ts';
import { HttpError } from '../../errors.ts';
import { productName } from '../../services/catalogue.ts';
import { PERMISSION } from '../../services/roles.ts';
import { adminPage, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';
import { errorBagOf, formFields, otherErrors } from './form-errors.ts';

const PER_PAGE = 50;
const ListQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).catch(1),
  status: z.enum(PROVISION_STATUSES).optional().catch(undefined),
  product: z.string().max(64).optional().transform((v) => v || undefined),
  location: z.string().max(64).optional().transform((v) => v || undefined),
  q: z.string().max(200).optional().transform((v) => v || undefined),
});
const SERVICE_FIELDS = ['username', 'notes'];

/** Links of a pager: previous / next pages keeping the filters. */
export function pager(path: string, query: Record<string, unknown>, page: number, perPage: number, total: number) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number) => `${path}?${new URLSearchParams({ ...Object.fromEntries(Object.entries(query).filter(([k, v]) => v !== undefined && k !== 'page').map(([k, v]) => [k, String(v)])), page: String(p) })}`;
  return { page, pages, total, prev: page > 1 ? link(page - 1) : null, next: page < pages ? link(page + 1) : null };
}


async function newServiceForm(deps: ServicesPageDeps, request: FastifyRequest, reply: FastifyReply, values: Record<string, unknown>, bag: Record<string, string[]> | null) {
  const products = (await deps.catalogue.list()).map((p) => ({ uuid: p.uuid, label: productName(p), selected: p.uuid === values.product_uuid }));
  return adminPage(deps, request, reply, 'service-new', {
    title: 'New service', products, customer_email: values.customer_email ?? '',
    fields: formFields(SERVICE_FIELDS, values, bag), other_errors: otherErrors(SERVICE_FIELDS, bag),
  }, { platform: 'services' }, bag ? 422 : 200);
}

/** What the services pages reach: services, the catalogue, customers, module logs and the queue. */
export type ServicesPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'catalogue' | 'customers' | 'moduleLogs' | 'queue' | 'serviceAdmin'>;

export function servicesPage(deps: ServicesPageDeps, app: FastifyInstance): void {
  app.get('/services', async (request, reply) => {
    hasPermission(request, PERMISSION.services);
    const query = ListQuery.parse(request.query ?? {});
    const list = await deps.serviceAdmin.list({ ...query, per_page: PER_PAGE });
    const services = list.services.map((s) => ({ ...s, username: s.service_data.username ?? '', location: s.product?.product_data.server_location ?? '' }));
    return adminPage(deps, request, reply, 'services', {
      title: 'Services', services, query, statuses: PROVISION_STATUSES.map((s) => ({ s, selected: s === query.status })),
      products: (await deps.catalogue.list()).map((p) => ({ uuid: p.uuid, selected: p.uuid === query.product })),
      pager: pager('/admin/services', query, query.page, PER_PAGE, list.total),
      can_create: request.admin!.hasPermission(PERMISSION.service_actions),
    }, { platform: 'services' });
  });

  app.get('/services/new', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    return newServiceForm(deps, request, reply, {}, null);
  });

  app.post('/services', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const values = { product_uuid: String(body.product_uuid ?? ''), customer_email: String(body.customer_email ?? '').trim(), username: body.username, notes: body.notes || null };
    const customer = values.customer_email ? await deps.customers.queries.findByEmail(values.customer_email) : null;
    if (values.customer_email && !customer) return newServiceForm(deps, request, reply, values, { customer_email: [`no customer with the address ${values.customer_email}`] });
    try {
      const created = await deps.serviceAdmin.createService(values.product_uuid, { username: values.username, notes: values.notes });
      if (customer) await deps.customers.queries.assignService(created.uuid, customer.uuid);
      flash(deps, reply, `Service ${created.uuid} created (${created.provision_status}).`);
      return reply.redirect(`/admin/services/${created.uuid}`, 303);
    } catch (error) {
      const bag = errorBagOf(error);
      if (!bag) throw error;
      return newServiceForm(deps, request, reply, values, bag);
    }
  });

  app.get<{ Params: { uuid: string }; Querystring: { log_page?: string } }>('/services/:uuid', async (request, reply) => {
    hasPermission(request, PERMISSION.services);
    const service = await deps.serviceAdmin.describe(request.params.uuid);
    let modulePage = '';
    try {
      modulePage = (await deps.serviceAdmin.productForService(service.uuid)).getServicePage();
    } catch (error) {
      modulePage = '';
      request.log.warn({ err: (error as Error).message }, 'getServicePage failed');
    }
    const tasks = await deps.queue.list({ tag: `service:${service.uuid}`, limit: 100 });
    const logPage = Math.max(1, Number(request.query.log_page) || 1);
    const logs = await deps.moduleLogs.list({ service: service.uuid, page: logPage, per_page: 25 });
    const owner = await deps.customers.queries.ownerOf(service.uuid);
    return adminPage(deps, request, reply, 'service', {
      title: `Service ${service.uuid}`, service, module_html: modulePage, tasks,
      logs: logs.logs.map((l) => ({ ...l, request_text: JSON.stringify(l.request), response_text: JSON.stringify(l.response) })),
      log_pager: pager(`/admin/services/${service.uuid}`, {}, logPage, 25, logs.total),
      owner: owner ? (await deps.customers.queries.get(owner))?.email ?? owner : null,
      actions: request.admin!.hasPermission(PERMISSION.service_actions) ? PROVISION_ACTIONS.filter((a) => a !== 'change_package') : [],
      change_products: request.admin!.hasPermission(PERMISSION.service_actions)
        ? (await deps.catalogue.list()).filter((p) => p.module === service.module && p.uuid !== service.product_uuid).map((p) => ({ uuid: p.uuid, label: productName(p) }))
        : [],
      can_assign: request.admin!.hasPermission(PERMISSION.customers),
      owner_uuid: owner,
      billing_actions: request.admin!.hasPermission(PERMISSION.billing_actions),
    }, { platform: 'services' });
  });

  app.get<{ Params: { uuid: string; action: string }; Querystring: { product_uuid?: string } }>('/services/:uuid/confirm/:action', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    const service = await deps.serviceAdmin.describe(request.params.uuid);
    if (!(PROVISION_ACTIONS as readonly string[]).includes(request.params.action)) throw new HttpError(404, `unknown action: ${request.params.action}`);
    return adminPage(deps, request, reply, 'service-confirm', {
      title: `Confirm ${request.params.action}`, service, action: request.params.action, product_uuid: request.query.product_uuid ?? '',
    }, { platform: 'services' });
  });

  app.post<{ Params: { uuid: string; action: string } }>('/services/:uuid/actions/:action', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const productUuid = typeof body.product_uuid === 'string' && body.product_uuid ? body.product_uuid : undefined;
    const result = await deps.serviceAdmin.runAction(request.params.uuid, request.params.action, { product_uuid: productUuid });
    const text = result.status === 'success' ? `${request.params.action}: queued` : `${request.params.action}: ${String(result.message ?? 'error')}`;
    flash(deps, reply, text, result.status === 'success' ? 'ok' : 'error');
    return reply.redirect(`/admin/services/${request.params.uuid}`, 303);
  });

  app.post<{ Params: { uuid: string } }>('/services/:uuid/owner', async (request, reply) => {
    hasPermission(request, PERMISSION.customers);
    const email = String((request.body as Record<string, unknown> | undefined)?.customer_email ?? '').trim();
    await deps.serviceAdmin.describe(request.params.uuid);
    const customer = email ? await deps.customers.queries.findByEmail(email) : null;
    if (email && !customer) throw new HttpError(422, `no customer with the address ${email}`);
    await deps.customers.queries.assignService(request.params.uuid, customer?.uuid ?? null);
    flash(deps, reply, customer ? `Service now belongs to ${customer.email}.` : 'Service has no owner now.');
    return reply.redirect(`/admin/services/${request.params.uuid}`, 303);
  });
}
