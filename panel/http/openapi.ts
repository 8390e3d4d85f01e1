// GET /api/v1/openapi.json: (in the envelope's msg) the OpenAPI 3 document generated from the routes' own zod schemas.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorEnvelopeSchema, successEnvelopeSchema } from '../../shared/wire/envelope.ts';
import { typed, type AnyRouteSpec } from './typed-route.ts';

/** Path of the document (under /api/v1, behind the access hash like every API route). */
const OPENAPI_PATH = '/openapi.json';

/** `msg` of GET /openapi.json: an OpenAPI 3 document (validated as such by the tests). */
const openapiDocumentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/** The fastify route schema the zod transform documents, from what the route declared (see `typed-route.ts`). */
function routeSchema(spec: AnyRouteSpec): Record<string, unknown> {
  const schema: Record<string, unknown> = {
    response: { 200: spec.produces ? z.string() : successEnvelopeSchema(spec.msg), '4XX': errorEnvelopeSchema, '5XX': errorEnvelopeSchema },
  };
  if (spec.params) schema.params = spec.params;
  if (spec.query) schema.querystring = spec.query;
  if (spec.body) {
    schema.body = spec.body;
    schema.consumes = ['application/x-www-form-urlencoded', 'application/json'];
  }
  return schema;
}

/**
 * Registers @fastify/swagger (before the routes, so it sees each one). Every /api/v1 route declares its schemas on
 * itself (`typed(app)`, kept in the route's `config.spec`); the zod type provider's `jsonSchemaTransform` turns them
 * into the document. Only /api/v1 routes are described (HEAD twins and the /metrics text are left out); an API
 * route without a declared spec fails the document's generation.
 */
export function registerOpenApi(app: FastifyInstance, version: string): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'vpnhost panel API', version, description: 'Every answer is the envelope {"error","msg","status"}.' },
      servers: [{ url: '/' }],
      components: { securitySchemes: { access_hash: { type: 'apiKey', in: 'cookie', name: 'access_hash' } } },
      security: [{ access_hash: [] }],
    },
    hideUntagged: false,
    exposeHeadRoutes: false,
    transform: ({ schema, url, route, ...rest }) => {
      if (!url.startsWith('/api/v1/')) return { schema: { ...schema, hide: true }, url };
      const spec = (route.config as { spec?: AnyRouteSpec } | undefined)?.spec;
      if (!spec) throw new Error(`${String(route.method)} ${url}: an API route without declared schemas (register it with typed(app))`);
      const out = jsonSchemaTransform({ schema: routeSchema(spec) as never, url, route, ...rest });
      if (spec.produces) {
        const response = (out.schema as { response: Record<string, unknown> }).response;
        response[200] = { description: `the ${spec.produces} content, no envelope`, content: { [spec.produces]: { schema: { type: 'string', format: 'binary' } } } };
      }
      return out;
    },
  });
}

/** The route plugin answering the document in the envelope's `msg`, like every /api/v1 answer. */
export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  typed(app).get(OPENAPI_PATH, { msg: openapiDocumentSchema }, () => app.swagger() as unknown as z.output<typeof openapiDocumentSchema>);
}
