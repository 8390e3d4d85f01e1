// VpnProduct's admin API: register panels (connection tested first) and list them without their access hashes;
// its worker API: a panel's connection for remote workers.
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PanelClient, PanelError } from './panel-client.ts';
import { connectionInfo, type PanelStore, type PanelSummary } from './panel-store.ts';

/** A 422/404 answer of the module's routes (the platform's error handler answers `statusCode` with `{error}`). */
class PanelAdminError extends Error {
  constructor(readonly statusCode: number, message: string) {
    super(message);
    this.name = 'PanelAdminError';
  }
}

const UNKNOWN_LOCATION = (location: string) => `unknown panel location: ${location}`;

const PANEL_NAME = /^[A-Za-z0-9_.-]+$/;

const PanelBodySchema = z.object({
  /** Unique panel name; defaults to the location (re-registering a location without a name replaces that panel). */
  name: z.string().trim().min(1).max(64).regex(PANEL_NAME, 'letters, digits, `_`, `.`, `-`').optional(),
  location: z.string().trim().min(1).max(64).regex(PANEL_NAME, 'letters, digits, `_`, `.`, `-`'),
  api_url: z.url({ protocol: /^https?$/ }),
  access_hash: z.string().min(1).max(200),
});

/** Panel registration behind the admin API. */
export class PanelAdmin {
  constructor(private readonly store: PanelStore) {}

  /** Tests the panel (GET /system/status) and stores it; 422 with the panel's text when it cannot be used. */
  async registerPanel(input: { name?: string; location: string; api_url: string; access_hash: string }): Promise<PanelSummary & { panel_version: string }> {
    const client = new PanelClient({ apiUrl: input.api_url, accessHash: input.access_hash, connections: 1, connectTimeoutMs: 5_000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000 });
    let version: string;
    try {
      version = (await client.systemStatus(AbortSignal.timeout(15_000))).version;
    } catch (err) {
      const text = err instanceof PanelError ? err.message : `cannot reach panel: ${(err as Error).message}`;
      throw new PanelAdminError(422, text);
    } finally {
      void client.close();
    }
    return { ...(await this.store.upsert(input)), panel_version: version };
  }

  list(): Promise<PanelSummary[]> {
    return this.store.list();
  }
}

/** `POST /api/admin/panels`, `GET /api/admin/panels`. */
export function panelAdminRoutes(admin: PanelAdmin): FastifyPluginAsync {
  return async (app) => {
    const api = app.withTypeProvider<ZodTypeProvider>();
    api.post('/panels', { schema: { body: PanelBodySchema } }, async (request, reply) => reply.code(201).send(await admin.registerPanel(request.body)));
    api.get('/panels', async () => ({ panels: await admin.list() }));
  };
}

/**
 * `GET /api/worker/modules/Product/VpnProduct/panels/:name`: URL and opened access hash; `GET .../locations/:location/panels`:
 * the names of the panels serving a location (worker tokens only).
 */
export function panelWorkerRoutes(store: PanelStore): FastifyPluginAsync {
  return async (app) => {
    const api = app.withTypeProvider<ZodTypeProvider>();
    api.get('/panels/:name', { schema: { params: z.object({ name: z.string().min(1).max(64) }) } }, async (request) => {
      const panel = await store.connection(request.params.name);
      if (!panel) throw new PanelAdminError(404, UNKNOWN_LOCATION(request.params.name));
      return connectionInfo(panel);
    });
    api.get('/locations/:location/panels', { schema: { params: z.object({ location: z.string().min(1).max(64) }) } }, async (request) => {
      const panels = await store.panelsAt(request.params.location);
      if (panels.length === 0) throw new PanelAdminError(404, UNKNOWN_LOCATION(request.params.location));
      return { panels };
    });
  };
}
