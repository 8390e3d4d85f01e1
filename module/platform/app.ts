// buildPlatformApp: the Fastify admin and worker APIs over a Platform's services (bearer-token auth, zod schemas), the
// modules' contributed routes, Plugin admin routes and payment webhooks; never listens.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { errorHandler, HttpError, NOT_FOUND } from './errors.ts';
import { lazyChildLoggerFactory } from './lazy-child-logger.ts';
import { PLATFORM_SERIALIZERS } from './logger.ts';
import type { Platform } from './platform.ts';
import { requireAdminToken, requireWorkerToken } from './routes/auth.ts';
import { billingRoutes } from './routes/billing.ts';
import { recurringBillingRoutes } from './routes/billing-recurring.ts';
import { revenueMetrics, revenueRoutes } from './routes/revenue.ts';
import { platformRevenue } from './web/admin/revenue-page.ts';
import { moduleRoutes } from './routes/modules.ts';
import { productRoutes } from './routes/products.ts';
import { serviceRoutes } from './routes/services.ts';
import { taskRoutes } from './routes/tasks.ts';
import { workerStoreRoutes } from './routes/worker-store.ts';
import { workerModuleRoutes } from './routes/worker-modules.ts';
import { workerTaskRoutes } from './routes/worker-tasks.ts';
import { workerBillingRoutes } from './routes/worker-billing.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { registerWebHost, type WebHostOptions } from './web/web-host.ts';

/** An unknown path under an API prefix: the error envelope with the method and the path (no query). */
function notFoundInEnvelope(request: { method: string; url: string }): never {
  throw new HttpError(404, `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}`);
}

export interface PlatformAppDeps {
  platform: Platform;
  /** Request logging (defaults to the platform's logger at warn level, so the hot path stays quiet). */
  logger?: Logger;
  /** Web host settings (session times, secure cookies, views). */
  web?: WebHostOptions;
}

/**
 * The platform app: `/api/admin/*` behind admin tokens (modules' `adminApi` routes included), `/api/worker/*` (remote
 * worker processes; a module's `workerApi` under `/api/worker/modules/<Type>/<Name>`) behind worker tokens,
 * `/admin/*` (admin pages; module admin routes `/admin/modules/<Type>/<Name>/<uri>` behind a session or an admin token
 * and the route's permission), `/client/*` (the client area), `/webhooks/payment/<gateway_uuid>`
 * and `/healthz` open. A token of one scope is refused by the other API.
 */
export async function buildPlatformApp(deps: PlatformAppDeps): Promise<FastifyInstance> {
  // Whatever logger is given, requests and errors are logged through the safe serializers (no query values).
  const logger = (deps.logger ?? deps.platform.logger.child({ part: 'http' }, { level: 'warn' })).child({}, { serializers: PLATFORM_SERIALIZERS });
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit: 256 * 1024,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}` });
  });
  const platform = deps.platform;
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.register(
    async (api) => {
      requireAdminToken(api, platform.tokens);
      await api.register(productRoutes(platform.catalogue));
      await api.register(serviceRoutes(platform.serviceAdmin));
      await api.register(taskRoutes(platform.queue, platform.ops));
      await api.register(moduleRoutes(platform.moduleAdmin, platform.moduleLogs));
      await api.register(billingRoutes(platform.billing));
      await api.register(recurringBillingRoutes(platform.recurring, platform.queue));
      await api.register(revenueRoutes(() => platformRevenue(platform)));
      for (const { manifest, ext } of platform.modules.mounted()) if (manifest.adminApi) await api.register(manifest.adminApi(ext));
      api.setNotFoundHandler(notFoundInEnvelope);
    },
    { prefix: '/api/admin' },
  );
  // The platform's Prometheus text (revenue gauges), behind an admin token like the admin API.
  await app.register(async (metrics) => {
    requireAdminToken(metrics, platform.tokens);
    metrics.get('/metrics', async (_request, reply) => {
      const { type, text } = await revenueMetrics(platformRevenue(platform));
      return reply.type(type).send(text);
    });
  });
  await app.register(
    async (api) => {
      requireWorkerToken(api, platform.workerTokens);
      await api.register(workerTaskRoutes(platform));
      await api.register(workerStoreRoutes(platform));
      await api.register(workerModuleRoutes(platform.moduleInstances));
      await api.register(workerBillingRoutes(platform.recurring));
      for (const { type, name, manifest, ext } of platform.modules.mounted()) {
        if (manifest.workerApi) await api.register(manifest.workerApi(ext), { prefix: `/modules/${type}/${name}` });
      }
      api.setNotFoundHandler(notFoundInEnvelope);
    },
    { prefix: '/api/worker' },
  );
  // Admin pages, module admin routes (`/admin/modules/<Type>/<Name>/<uri>`: session or admin token, hasPermission)
  // and the client area.
  await registerWebHost(app, platform, deps.web);
  await app.register(webhookRoutes(platform.moduleAdmin), { prefix: '/webhooks/payment' });
  for (const { type, name, manifest, ext } of platform.modules.mounted()) {
    if (manifest.clientRoutes) await app.register(manifest.clientRoutes(ext), { prefix: `/client/modules/${type}/${name}` });
  }
  return app;
}
