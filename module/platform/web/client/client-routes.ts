// The client area: "my services", a service's tabs (the Product module's getClientAreaMenuConfig() rendered through
// variables_<tab>()), and AJAX calls to controllerClient_<tab><Method>(); every service route checks ownership — a
// service of someone else answers exactly like one that does not exist (404).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callClientAreaController, CLIENT_AREA_METHOD, clientAreaVariables } from '../../../contract/client-area.ts';
import type { ModuleRequest } from '../../../contract/http.ts';
import type { Product } from '../../../contract/product.ts';
import { bindProduct } from '../../bind-product.ts';
import { HttpError, UNKNOWN_SERVICE } from '../../errors.ts';
import { productName } from '../../services/catalogue.ts';
import { billingViewOf, type ServiceBillingView } from '../../services/billing/periods.ts';
import type { ServiceView } from '../../services/service-admin.ts';
import type { ServicePageRead } from '../../store/query/repositories/client-page.ts';
import { requestLocale } from '../locale-time.ts';
import { clientPage, clientPageHtml, csrfToken, sendHtml, wantsHtml, type ClientPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { clientAuthRoutes } from './client-auth-routes.ts';
import { requestMark, requireCustomer } from './customer-session.ts';
import { billingRoutes } from './billing-routes.ts';
import { invoiceRoutes } from './invoice-routes.ts';
import { orderRoutes } from './order-routes.ts';
import { ServicePageCache } from './service-page-cache.ts';

/** The service page's parameters (its own schema: the page is the client area's most requested). */
const SERVICE = z.object({ uuid: z.string().max(64) });
const UUID = z.object({ uuid: z.string().max(64), tab: z.string().regex(/^[A-Za-z0-9_]{1,64}$/).optional(), method: z.string().regex(CLIENT_AREA_METHOD).optional() });

/** The Product instance of a service the request's customer owns; 404 otherwise (never telling whether it exists). */
/** What the ownership check of a service needs: the customers' service owners and the services' Product instances. */
export type OwnedServiceDeps = Pick<WebDeps, 'customers' | 'serviceAdmin'>;

/** What the service list and service page routes reach: the joined client reads, the Product modules, recurring billing. */
export type ServiceRoutesDeps = ClientPageDeps & OwnedServiceDeps & Pick<WebDeps, 'clientReads' | 'modules' | 'recurring'>;

export async function ownedService(deps: OwnedServiceDeps, request: FastifyRequest, uuid: string): Promise<Product> {
  const owner = await deps.customers.queries.ownerOf(uuid);
  if (!owner || owner !== request.customer?.uuid) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
  return deps.serviceAdmin.productForService(uuid);
}

/** What the client area shows of a service (a ServiceView, or the service page's own read). */
type Summarised = Pick<ServiceView, 'uuid' | 'provision_status' | 'service_data' | 'module' | 'created_at'> & { product: ServicePageRead['product'] };

/** One service of the customer as the client area shows it (product name, status, where it runs). */
function summary(s: Summarised) {
  return {
    uuid: s.uuid, status: s.provision_status, username: String(s.service_data.username ?? ''), module: s.module, created_at: s.created_at,
    product: s.product ? productName(s.product) : s.module,
    location: String(s.product?.product_data.server_location ?? ''), plan: String(s.product?.product_data.plan_type ?? ''),
  };
}

/**
 * The service page's read (service, product, billing period, open invoices: one joined query) and the Product bound to
 * the service, when the request's customer owns it; 404 otherwise, as ownedService.
 */
async function ownedServicePage(deps: Pick<WebDeps, 'clientReads' | 'modules'>, request: FastifyRequest, uuid: string): Promise<{ read: ServicePageRead; module: Product }> {
  const read = request.customer ? await deps.clientReads.servicePage(uuid) : null;
  if (!read || read.service.customer_uuid !== request.customer?.uuid) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
  return { read, module: bindProduct(deps.modules, uuid, read.service, read.product) };
}

/** The customer's services with product and status. */
async function myServices(deps: OwnedServiceDeps, customerUuid: string) {
  return Promise.all((await deps.customers.queries.serviceUuids(customerUuid)).map(async (uuid) => summary(await deps.serviceAdmin.describe(uuid))));
}

/** The open invoice a service waits for before it is set up (its billing period is `pending`), or null. */
function awaitedInvoice(billing: ServiceBillingView | null): { uuid: string; number: string; amount: string; currency: string } | null {
  if (!billing || billing.state !== 'pending') return null;
  const open = billing.open_invoices[0];
  return open ? { uuid: open.uuid, number: open.number, amount: open.amount, currency: billing.currency } : null;
}

/** What a tab shows while the service waits for payment: the invoice to pay, instead of the module's content. */
function waitingHtml(invoice: { uuid: string; number: string; amount: string; currency: string }): string {
  const esc = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<p class="note waiting" id="awaiting-payment">This service waits for payment: it is set up as soon as invoice `
    + `<a href="/client/invoices/${esc(invoice.uuid)}">${esc(invoice.number)}</a> (${esc(invoice.amount)} ${esc(invoice.currency)}) is paid.</p>`;
}

/**
 * The tab's template rendered with `variables_<tab>()` plus the page's CSRF token (`csrf`, for the tab's forms) and
 * the reader's locale (`locale`, for `{{time}}`); `reusable` when the tab declares it depends on the store alone
 * (`cache: 'store'`) and rendered (the fallback after an error is never kept).
 */
async function tabHtml(module: Product, tab: string, request: FastifyRequest, reply: FastifyReply): Promise<{ html: string; reusable: boolean }> {
  try {
    const entry = module.getClientAreaMenuConfig()[tab];
    const html = await module.view(entry.template, { ...(await clientAreaVariables(module, tab)), csrf: csrfToken(reply), locale: requestLocale(request) });
    return { html, reusable: entry.cache === 'store' };
  } catch (error) {
    module.logError(`client_area.${tab}`, { render: tab }, (error as Error).message);
    return { html: '<p class="error">This part of the page could not be loaded.</p>', reusable: false };
  }
}

function toModuleRequest(request: FastifyRequest): ModuleRequest {
  return { method: request.method, headers: { ...request.headers }, query: { ...(request.query as Record<string, unknown>) }, body: request.body ?? null, ip: request.ip };
}

/** Registers the client area: the open auth routes, then the customer guard and every route family behind it. */
export function clientRoutes(deps: WebDeps, app: FastifyInstance): void {
  app.register(async (open) => clientAuthRoutes(deps, open));
  app.register(async (area) => {
    requireCustomer(deps, area);
    orderRoutes(deps, area);
    invoiceRoutes(deps, area);
    billingRoutes(deps, area);
    serviceRoutes(deps, area);
  });
}

/**
 * "My services", a service's page and tabs, and the tabs' AJAX controller calls (inside the customer guard). A service
 * page is kept as rendered while the store is unchanged (ServicePageCache) when everything on it comes from the store.
 */
function serviceRoutes(deps: ServiceRoutesDeps, area: FastifyInstance): void {
  const pages = new ServicePageCache((request) => requestMark(deps, request));
  area.get('/', async (request, reply) => clientPage(deps, request, reply, 'services', { title: 'My services', services: await myServices(deps, request.customer!.uuid) }));

  area.get<{ Params: { uuid: string }; Querystring: { tab?: string } }>('/services/:uuid', { schema: { params: SERVICE } }, async (request, reply) => {
    const slot = pages.slot(request, request.params.uuid, request.query.tab);
    const kept = pages.get(slot);
    if (kept !== undefined) return sendHtml(reply, kept);
    const { read, module } = await ownedServicePage(deps, request, request.params.uuid);
    const menu = module.getClientAreaMenuConfig();
    const keys = Object.keys(menu);
    const current = request.query.tab && keys.includes(request.query.tab) ? request.query.tab : keys[0];
    const { service: stored, product } = read;
    const service = summary({ ...stored, module: stored.module_name, product });
    const billing = read.billing ? billingViewOf(read.billing, read.open_invoices) : null;
    const waiting = awaitedInvoice(billing);
    const tab = waiting ? { html: waitingHtml(waiting), reusable: true } : current ? await tabHtml(module, current, request, reply) : { html: '', reusable: true };
    const html = clientPageHtml(deps, request, reply, 'service', {
      title: `${service.product}${service.username ? ` · ${service.username}` : ''}`, service, waiting,
      billing, can_cancel: billing !== null && ['active', 'overdue', 'suspended', 'pending'].includes(billing.state) && !billing.cancel_at,
      tabs: keys.map((key) => ({ key, name: menu[key].name, active: key === current, href: `/client/services/${service.uuid}?tab=${key}` })),
      tab: current ?? null,
      tab_html: tab.html,
    });
    if (tab.reusable) pages.set(slot, html);
    return sendHtml(reply, html);
  });

  area.get<{ Params: { uuid: string; tab: string } }>('/services/:uuid/tabs/:tab', { schema: { params: UUID } }, async (request, reply) => {
    const module = await ownedService(deps, request, request.params.uuid);
    if (!Object.hasOwn(module.getClientAreaMenuConfig(), request.params.tab)) throw new HttpError(404, `unknown tab: ${request.params.tab}`);
    const waiting = awaitedInvoice(await deps.recurring.periods.view(request.params.uuid));
    return sendHtml(reply, waiting ? waitingHtml(waiting) : (await tabHtml(module, request.params.tab, request, reply)).html);
  });

  const ajax = async (request: FastifyRequest<{ Params: { uuid: string; tab: string; method: string } }>, reply: FastifyReply) => {
    let module: Product;
    try {
      module = await ownedService(deps, request, request.params.uuid);
    } catch (error) {
      if (wantsHtml(request)) throw error;
      return reply.code(404).send({ success: false, message: (error as Error).message });
    }
    const answer = await callClientAreaController(module, request.params.tab, request.params.method, toModuleRequest(request));
    reply.code(answer.status);
    for (const [key, value] of Object.entries(answer.headers ?? {})) reply.header(key, value);
    return reply.send(answer.body);
  };
  area.get('/services/:uuid/ajax/:tab/:method', { schema: { params: UUID } }, ajax);
  area.post('/services/:uuid/ajax/:tab/:method', { schema: { params: UUID } }, ajax);
}
