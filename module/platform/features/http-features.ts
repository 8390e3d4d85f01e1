// The platform's HTTP features, registered on one Fastify instance over what the running platform provides: the
// admin API, the revenue metrics, the worker API, the web host (admin pages, client area), payment webhooks and the
// modules' client routes. Each route plugin gets only the services it calls.
import type { FastifyInstance } from 'fastify';
import { liveFeatureFor } from '../../../shared/feature-graph.ts';
import { HttpError, NOT_FOUND } from '../errors.ts';
import { requireAdminToken, requireWorkerToken } from '../routes/auth.ts';
import { billingRoutes } from '../routes/billing.ts';
import { recurringBillingRoutes } from '../routes/billing-recurring.ts';
import { moduleRoutes } from '../routes/modules.ts';
import { productRoutes } from '../routes/products.ts';
import { revenueMetrics, revenueRoutes } from '../routes/revenue.ts';
import { serviceRoutes } from '../routes/services.ts';
import { taskRoutes } from '../routes/tasks.ts';
import { webhookRoutes } from '../routes/webhooks.ts';
import { workerBillingRoutes } from '../routes/worker-billing.ts';
import { workerModuleRoutes } from '../routes/worker-modules.ts';
import { workerStoreRoutes } from '../routes/worker-store.ts';
import { workerTaskRoutes } from '../routes/worker-tasks.ts';
import { WEB_SERVICE_KEYS, type WebDeps } from '../web/web-deps.ts';
import { registerWebHost, type WebHostOptions, type WebSources } from '../web/web-host.ts';
import type { PlatformRegistry } from './registry.ts';

/** The HTTP graph's registry: the running platform's, the app, the web host's settings and its services. */
export interface HttpRegistry extends PlatformRegistry {
  app: FastifyInstance;
  web: WebHostOptions;
  webDeps: WebDeps;
}

const define = liveFeatureFor<HttpRegistry>();

/** An unknown path under an API prefix: the error envelope with the method and the path (no query). */
function notFoundInEnvelope(request: { method: string; url: string }): never {
  throw new HttpError(404, `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}`);
}

/** `/api/admin/*` behind admin tokens, with the modules' `adminApi` routes. */
const adminApiFeature = define({
  name: 'admin-api',
  needs: ['app', 'tokens', 'catalogue', 'serviceAdmin', 'queue', 'ops', 'moduleAdmin', 'moduleLogs', 'billing', 'recurring', 'revenue', 'modules'],
  provides: [],
  async start(get) {
    const [queue, modules, revenue] = [get('queue'), get('modules'), get('revenue')];
    await get('app').register(async (api) => {
      requireAdminToken(api, get('tokens'));
      await api.register(productRoutes(get('catalogue')));
      await api.register(serviceRoutes(get('serviceAdmin')));
      await api.register(taskRoutes({ queue, ops: get('ops') }));
      await api.register(moduleRoutes({ moduleAdmin: get('moduleAdmin'), moduleLogs: get('moduleLogs') }));
      await api.register(billingRoutes(get('billing')));
      await api.register(recurringBillingRoutes({ recurring: get('recurring'), queue }));
      await api.register(revenueRoutes(() => revenue));
      for (const { manifest, ext } of modules.mounted()) if (manifest.adminApi) await api.register(manifest.adminApi(ext));
      api.setNotFoundHandler(notFoundInEnvelope);
    }, { prefix: '/api/admin' });
    return {};
  },
});

/** `/healthz` (open) and `/metrics`: the platform's Prometheus text (revenue gauges), behind an admin token. */
const metricsFeature = define({
  name: 'metrics',
  needs: ['app', 'tokens', 'revenue'],
  provides: [],
  async start(get) {
    const [app, revenue] = [get('app'), get('revenue')];
    app.get('/healthz', async () => ({ status: 'ok' }));
    await app.register(async (metrics) => {
      requireAdminToken(metrics, get('tokens'));
      metrics.get('/metrics', async (_request, reply) => {
        const { type, text } = await revenueMetrics(revenue);
        return reply.type(type).send(text);
      });
    });
    return {};
  },
});

/** `/api/worker/*` behind worker tokens (remote worker processes), with each module's `workerApi` under its prefix. */
const workerApiFeature = define({
  name: 'worker-api',
  needs: ['app', 'workerTokens', 'taskStore', 'versions', 'queue', 'loaded', 'services', 'lifecycle', 'products', 'moduleLogStore', 'moduleInstances', 'recurring', 'modules'],
  provides: [],
  async start(get) {
    await get('app').register(async (api) => {
      requireWorkerToken(api, get('workerTokens'));
      await api.register(workerTaskRoutes({ taskStore: get('taskStore') }));
      await api.register(workerStoreRoutes({
        versions: get('versions'), queue: get('queue'), loaded: get('loaded'), services: get('services'), lifecycle: get('lifecycle'),
        products: get('products'), moduleLogStore: get('moduleLogStore'),
      }));
      await api.register(workerModuleRoutes(get('moduleInstances')));
      await api.register(workerBillingRoutes(get('recurring')));
      for (const { type, name, manifest, ext } of get('modules').mounted()) {
        if (manifest.workerApi) await api.register(manifest.workerApi(ext), { prefix: `/modules/${type}/${name}` });
      }
      api.setNotFoundHandler(notFoundInEnvelope);
    }, { prefix: '/api/worker' });
    return {};
  },
});

/**
 * Admin pages, module admin routes (`/admin/modules/<Type>/<Name>/<uri>`: session or admin token, hasPermission) and
 * the client area, given the services they call.
 */
const webHostFeature = define({
  name: 'web-host',
  needs: ['app', 'web', 'store', 'box', ...WEB_SERVICE_KEYS],
  provides: ['webDeps'],
  async start(get) {
    const sources = Object.fromEntries((['store', 'box', ...WEB_SERVICE_KEYS] as const).map((key) => [key, get(key)])) as WebSources;
    return { webDeps: await registerWebHost(get('app'), sources, get('web')) };
  },
});

/** `/webhooks/payment/<gateway_uuid>` (open: each gateway checks its signature). */
const webhooksFeature = define({
  name: 'webhooks',
  needs: ['app', 'moduleAdmin'],
  provides: [],
  async start(get) {
    await get('app').register(webhookRoutes(get('moduleAdmin')), { prefix: '/webhooks/payment' });
    return {};
  },
});

/** The modules' `clientRoutes` under `/client/modules/<Type>/<Name>`. */
const moduleClientRoutesFeature = define({
  name: 'module-client-routes',
  needs: ['app', 'modules'],
  provides: [],
  async start(get) {
    for (const { type, name, manifest, ext } of get('modules').mounted()) {
      if (manifest.clientRoutes) await get('app').register(manifest.clientRoutes(ext), { prefix: `/client/modules/${type}/${name}` });
    }
    return {};
  },
});

/** The HTTP features in the order routes are registered when nothing else decides it. */
export const HTTP_FEATURES = [metricsFeature, adminApiFeature, workerApiFeature, webHostFeature, webhooksFeature, moduleClientRoutesFeature];
