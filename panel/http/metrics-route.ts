// GET /metrics (Prometheus text, outside /api/v1) behind its own bearer token or an access hash; API request timings.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { PanelDeps, PanelServices } from '../services/index.ts';
import { accessHashHook } from './auth.ts';

/** Path of the metrics endpoint. */
const METRICS_PATH = '/metrics';

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '');
  return match?.[1];
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Registers GET /metrics and an onResponse hook timing every request by route pattern. The endpoint accepts
 * `Authorization: Bearer <deps.metricsToken>` (compared in constant time over SHA-256 digests) when a token is
 * configured, and otherwise (or in addition) the API's access-hash cookie bound to the client address; anything
 * else answers `Not authorized` (401) in the envelope, like the API.
 */
export function registerMetrics(app: FastifyInstance, services: PanelServices, deps: PanelDeps): void {
  const { metrics } = services;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === METRICS_PATH) return;
    metrics.observeApiRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  const expected = deps.metricsToken ? digest(deps.metricsToken) : null;
  const byHash = accessHashHook(services.accessHashes, deps.trustProxy ?? []);
  app.get(METRICS_PATH, {
    onRequest: async function (request, reply) {
      const token = bearer(request.headers.authorization);
      if (expected && token !== undefined && timingSafeEqual(digest(token), expected)) return;
      await byHash.call(this, request, reply);
    },
  }, async (_request, reply) => {
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
}
