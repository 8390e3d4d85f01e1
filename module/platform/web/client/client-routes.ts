// The client area: "my services", a service's tabs (the Product module's getClientAreaMenuConfig() rendered through
// variables_<tab>()), and AJAX calls to controllerClient_<tab><Method>(); every service route checks ownership — a
// service of someone else answers exactly like one that does not exist (404).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callClientAreaController, CLIENT_AREA_METHOD, clientAreaVariables } from '../../../contract/client-area.ts';
import type { ModuleRequest } from '../../../contract/http.ts';
import type { Product } from '../../../contract/product.ts';
import { HttpError, UNKNOWN_SERVICE } from '../../errors.ts';
import { clientPage, csrfToken, wantsHtml } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { clientAuthRoutes } from './client-auth-routes.ts';
import { requireCustomer } from './customer-session.ts';
import { billingRoutes } from './billing-routes.ts';
import { invoiceRoutes } from './invoice-routes.ts';
import { orderRoutes } from './order-routes.ts';

const UUID = z.object({ uuid: z.string().max(64), tab: z.string().regex(/^[A-Za-z0-9_]{1,64}$/).optional(), method: z.string().regex(CLIENT_AREA_METHOD).optional() });

/** The Product instance of a service the request's customer owns; 404 otherwise (never telling whether it exists). */
export function ownedService(deps: WebDeps, request: FastifyRequest, uuid: string): Product {
  const owner = deps.customers.repo.ownerOf(uuid);
  if (!owner || owner !== request.customer?.uuid) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
  return deps.platform.serviceAdmin.productForService(uuid);
}

/** The customer's services with product and status. */
function myServices(deps: WebDeps, customerUuid: string) {
  return deps.customers.repo.serviceUuids(customerUuid).map((uuid) => deps.platform.serviceAdmin.describe(uuid)).map((s) => ({
    uuid: s.uuid, status: s.provision_status, username: s.service_data.username ?? '', module: s.module,
    location: s.product?.product_data.server_location ?? '', plan: s.product?.product_data.plan_type ?? '',
  }));
}

/** The tab's template rendered with `variables_<tab>()` plus the page's CSRF token (`csrf`, for the tab's forms). */
async function tabHtml(module: Product, tab: string, csrf: string): Promise<string> {
  try {
    const entry = module.getClientAreaMenuConfig()[tab];
    return module.view(entry.template, { ...(await clientAreaVariables(module, tab)), csrf });
  } catch (error) {
    module.logError(`client_area.${tab}`, { render: tab }, (error as Error).message);
    return '<p class="error">This part of the page could not be loaded.</p>';
  }
}

function toModuleRequest(request: FastifyRequest): ModuleRequest {
  return { method: request.method, headers: { ...request.headers }, query: { ...(request.query as Record<string, unknown>) }, body: request.body ?? null, ip: request.ip };
}

export function clientRoutes(deps: WebDeps, app: FastifyInstance): void {
  app.register(async (open) => clientAuthRoutes(deps, open));
  app.register(async (area) => {
    requireCustomer(deps, area);
    orderRoutes(deps, area);
    invoiceRoutes(deps, area);
    billingRoutes(deps, area);

    area.get('/', async (request, reply) => clientPage(deps, request, reply, 'services', { title: 'My services', services: myServices(deps, request.customer!.uuid) }));

    area.get<{ Params: { uuid: string }; Querystring: { tab?: string } }>('/services/:uuid', { schema: { params: UUID } }, async (request, reply) => {
      const module = ownedService(deps, request, request.params.uuid);
      const menu = module.getClientAreaMenuConfig();
      const keys = Object.keys(menu);
      const current = request.query.tab && keys.includes(request.query.tab) ? request.query.tab : keys[0];
      const service = myServices(deps, request.customer!.uuid).find((s) => s.uuid === request.params.uuid)!;
      const billing = deps.platform.recurring.periods.view(service.uuid);
      return clientPage(deps, request, reply, 'service', {
        title: `Service ${service.username || service.uuid}`, service,
        billing, can_cancel: billing !== null && ['active', 'overdue', 'suspended', 'pending'].includes(billing.state) && !billing.cancel_at,
        tabs: keys.map((key) => ({ key, name: menu[key].name, active: key === current, href: `/client/services/${service.uuid}?tab=${key}` })),
        tab: current ?? null,
        tab_html: current ? await tabHtml(module, current, csrfToken(reply)) : '',
      });
    });

    area.get<{ Params: { uuid: string; tab: string } }>('/services/:uuid/tabs/:tab', { schema: { params: UUID } }, async (request, reply) => {
      const module = ownedService(deps, request, request.params.uuid);
      if (!Object.hasOwn(module.getClientAreaMenuConfig(), request.params.tab)) throw new HttpError(404, `unknown tab: ${request.params.tab}`);
      return reply.type('text/html; charset=utf-8').send(await tabHtml(module, request.params.tab, csrfToken(reply)));
    });

    const ajax = async (request: FastifyRequest<{ Params: { uuid: string; tab: string; method: string } }>, reply: FastifyReply) => {
      let module: Product;
      try {
        module = ownedService(deps, request, request.params.uuid);
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
  });
}
