// buildApp(deps): the panel's Fastify instance with body parsers, envelope errors, access-hash auth and routes.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { addAccessLog } from './http/access-log.ts';
import { accessHashHook } from './http/auth.ts';
import { registerBodyParsers, BODY_LIMIT } from './http/body-parsers.ts';
import { clientErrorHandler } from './http/client-error.ts';
import { registerMetrics } from './http/metrics-route.ts';
import { openapiRoutes, registerOpenApi } from './http/openapi.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import type { PanelRoutes } from './http/route-plugin.ts';
import type { AnyRouteSpec } from './http/typed-route.ts';
import { licenseRoutes } from './routes/license.ts';
import { systemRoutes } from './routes/system.ts';
import { accountRoutes } from './routes/accounts.ts';
import { wireguardRoutes } from './routes/wireguard.ts';
import { firewallRoutes } from './routes/firewall.ts';
import { portForwardRoutes } from './routes/port-forward.ts';
import { trafficLoggingRoutes } from './routes/traffic-logging.ts';
import { statisticsRoutes } from './routes/statistics.ts';
import { otlRoutes } from './routes/otl.ts';
import { registerOtlPage } from './pages/otl-page.ts';
import { dnsRoutes } from './routes/dns.ts';
import { ikev2Routes } from './routes/ikev2.ts';
import { backupRoutes } from './routes/backups.ts';
import { buildServices, type PanelDeps, type PanelServices } from './services/index.ts';

export type { PanelDeps, PanelServices } from './services/index.ts';

/** API root. */
const API_PREFIX = '/api/v1';

/** Route plugins registered under /api/v1, one per resource. */
const routes: PanelRoutes[] = [
  systemRoutes,
  licenseRoutes,
  wireguardRoutes,
  accountRoutes,
  portForwardRoutes,
  firewallRoutes,
  trafficLoggingRoutes,
  statisticsRoutes,
  otlRoutes,
  dnsRoutes,
  ikev2Routes,
  backupRoutes,
  openapiRoutes,
];

/** One registered route (method and full path), as collected by buildApp. */
export interface RouteEntry {
  method: string;
  url: string;
  /** The schemas the route declared (`typed(app)`); absent for routes outside /api/v1. */
  spec?: AnyRouteSpec;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The panel's services (tests and server.ts use them; routes get them as plugin options). */
    services: PanelServices;
    /** Every route registered (method, full path), for route-enumerating tests. */
    routeTable: RouteEntry[];
  }
}

/** Builds the panel app from `deps`; it never listens (server.ts does), tests use `inject()`. */
export function buildApp(deps: PanelDeps): FastifyInstance {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    genReqId: () => randomUUID(),
    // One access line per request (onResponse below) instead of fastify's two redacted ones.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: 'idle',
    // While closing, requests already on open connections are served normally (not fastify's own 503 body).
    return503OnClosing: false,
    clientErrorHandler,
    // Undecodable URLs (`/%zz`) and constraint failures: the same envelope as every other error.
    frameworkErrors: (err, request, reply) => errorHandler(err, request, reply),
  }) as unknown as FastifyInstance;
  const services = buildServices(deps);
  const routeTable: RouteEntry[] = [];
  app.decorate('services', services);
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    const spec = (route.config as { spec?: AnyRouteSpec } | undefined)?.spec;
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url, spec });
  });
  if (deps.logger) addAccessLog(app, deps.logger);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  registerBodyParsers(app);
  registerMetrics(app, services, deps);
  registerOpenApi(app, deps.version);
  // The public one-time-link page lives outside /api/v1: no access-hash hook, no cookie.
  registerOtlPage(app, services.otl);
  void app.register(
    async (api) => {
      api.addHook('onRequest', accessHashHook(services.accessHashes, deps.trustProxy ?? []));
      api.setNotFoundHandler(notFoundHandler);
      for (const plugin of routes) await api.register(plugin, { services, deps });
    },
    { prefix: API_PREFIX },
  );
  return app;
}
