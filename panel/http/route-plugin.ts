// The shape of a resource's route file: a fastify plugin registered under /api/v1 with the services in its options.
import type { FastifyPluginAsync } from 'fastify';
import type { PanelDeps, PanelServices } from '../services/index.ts';

/** Options every route plugin receives. */
export interface RouteContext {
  services: PanelServices;
  deps: PanelDeps;
}

/**
 * A resource's routes, e.g. `export const systemRoutes: PanelRoutes = async (app, { services }) => { ... }`.
 * Paths are relative to /api/v1 (auth already enforced); validate with `parseInput` (panel/http/validate.ts),
 * answer `ok(result)` (panel/http/envelope.ts), throw `ApiError` for the spec's texts.
 */
export type PanelRoutes = FastifyPluginAsync<RouteContext>;
