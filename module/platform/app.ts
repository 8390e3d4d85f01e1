// buildPlatformApp: a Fastify instance with the platform's HTTP features (features/http-features.ts) over a running
// Platform: admin and worker APIs (bearer-token auth, zod schemas), web host, webhooks, modules' routes; never listens.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { errorHandler, NOT_FOUND } from './errors.ts';
import { lazyChildLoggerFactory } from './lazy-child-logger.ts';
import { PLATFORM_SERIALIZERS } from './logger.ts';
import type { Platform } from './platform.ts';
import { RunningGraph } from '../../shared/feature-graph.ts';
import { HTTP_FEATURES, type HttpRegistry } from './features/http-features.ts';
import type { WebHostOptions } from './web/web-host.ts';

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
  // The route plugins, ordered by what each needs from the running platform (features/http-features.ts).
  const seed: Partial<HttpRegistry> = { ...deps.platform.context(), app, web: deps.web ?? {} };
  await RunningGraph.start(HTTP_FEATURES, seed, undefined);
  return app;
}
