// buildPlatformApp: the Fastify admin and worker APIs over a Platform (bearer-token auth, zod schemas); never listens.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { errorHandler, HttpError, NOT_FOUND } from './errors.ts';
import { PLATFORM_SERIALIZERS } from './logger.ts';
import type { Platform } from './platform.ts';
import { requireAdminToken, requireWorkerToken } from './routes/auth.ts';
import { panelRoutes } from './routes/panels.ts';
import { productRoutes } from './routes/products.ts';
import { serviceRoutes } from './routes/services.ts';
import { taskRoutes } from './routes/tasks.ts';
import { workerStoreRoutes } from './routes/worker-store.ts';
import { workerTaskRoutes } from './routes/worker-tasks.ts';

export interface PlatformAppDeps {
  platform: Platform;
  /** Request logging (defaults to the platform's logger at warn level, so the hot path stays quiet). */
  logger?: Logger;
}

/**
 * The platform app: `/api/admin/*` behind admin tokens, `/api/worker/*` (remote worker processes) behind worker tokens,
 * `/healthz` open. A token of one scope is refused by the other API.
 */
export async function buildPlatformApp(deps: PlatformAppDeps): Promise<FastifyInstance> {
  // Whatever logger is given, requests and errors are logged through the safe serializers (no query values).
  const logger = (deps.logger ?? deps.platform.logger.child({ part: 'http' }, { level: 'warn' })).child({}, { serializers: PLATFORM_SERIALIZERS });
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: 256 * 1024,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}` });
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.register(
    async (api) => {
      requireAdminToken(api, deps.platform.tokens);
      await api.register(panelRoutes(deps.platform));
      await api.register(productRoutes(deps.platform));
      await api.register(serviceRoutes(deps.platform));
      await api.register(taskRoutes(deps.platform));
      api.setNotFoundHandler((request) => {
        throw new HttpError(404, `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}`);
      });
    },
    { prefix: '/api/admin' },
  );
  await app.register(
    async (api) => {
      requireWorkerToken(api, deps.platform.workerTokens);
      await api.register(workerTaskRoutes(deps.platform));
      await api.register(workerStoreRoutes(deps.platform));
      api.setNotFoundHandler((request) => {
        throw new HttpError(404, `${NOT_FOUND}: ${request.method} ${request.url.split('?')[0]}`);
      });
    },
    { prefix: '/api/worker' },
  );
  return app;
}
