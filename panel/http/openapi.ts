// GET /api/v1/openapi.json: (in the envelope's msg) the OpenAPI 3 document @fastify/swagger builds from the routes and their zod schemas.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from './envelope.ts';
import { AccountCreateBodySchema, AccountDumpSchema, AccountListSchema, AccountSchema, AccountUpdateBodySchema } from '../schemas/account.ts';
import { errorEnvelopeSchema, successEnvelopeSchema, successStringSchema } from '../schemas/envelope.ts';
import { FilterRuleBodySchema, FilterRuleListSchema, FirewallConfBodySchema, FirewallConfSchema, FirewallInfoSchema, MangleRuleListSchema, NatRuleListSchema } from '../schemas/firewall.ts';
import { licenseSchema } from '../schemas/license.ts';
import { ListingQuerySchema } from '../schemas/listing.ts';
import { PortForwardCreateBodySchema, PortForwardMapSchema } from '../schemas/port-forward.ts';
import { TrafficStatisticsRangeQuerySchema, TrafficStatisticsSchema } from '../schemas/statistics.ts';
import { systemConfigSchema, systemConfigUpdateSchema, systemInfoSchema, systemStatusSchema } from '../schemas/system.ts';
import { trafficLoggingConfigSchema, trafficLoggingUpdateSchema } from '../schemas/traffic-logging.ts';
import {
  AvailableIpsSchema, WireguardCreateBodySchema, WireguardDumpSchema, WireguardInfoSchema, WireguardOnlineSchema, WireguardPeersSchema,
  WireguardServerMapSchema, WireguardServerSchema, WireguardUpdateBodySchema,
} from '../schemas/wireguard.ts';

/** Path of the document (under /api/v1, behind the access hash like every API route). */
export const OPENAPI_PATH = '/openapi.json';

/** The zod schemas of one route: `msg` of the success envelope, the request body, the query. */
interface RouteDoc {
  msg?: z.ZodType;
  body?: z.ZodType;
  query?: z.ZodType;
}

/**
 * The schemas each route validates with or answers, keyed `METHOD /path` (paths relative to /api/v1). A route not
 * listed is still documented (path parameters, the envelope with an untyped `msg`).
 */
const ROUTES: Record<string, RouteDoc> = {
  'GET /account': { msg: AccountListSchema, query: ListingQuerySchema },
  'POST /account': { msg: AccountSchema, body: AccountCreateBodySchema },
  'GET /account/:name': { msg: AccountSchema },
  'PUT /account/:name': { msg: AccountSchema, body: AccountUpdateBodySchema },
  'DELETE /account/:name': { msg: successStringSchema },
  'GET /account/:name/config_text': { msg: z.string() },
  'GET /account/:name/config_qr': { msg: z.string() },
  'GET /account/:name/dump': { msg: AccountDumpSchema },
  'GET /account/:name/traffic_statistics/:year/:month': { msg: TrafficStatisticsSchema },
  'GET /traffic_statistics': { msg: TrafficStatisticsSchema, query: TrafficStatisticsRangeQuerySchema },
  'GET /firewall/info': { msg: FirewallInfoSchema },
  'GET /firewall/conf': { msg: FirewallConfSchema },
  'PUT /firewall/conf': { body: FirewallConfBodySchema },
  'GET /firewall/rules/filter': { msg: FilterRuleListSchema },
  'POST /firewall/rules/filter/top': { body: FilterRuleBodySchema },
  'POST /firewall/rules/filter/end': { body: FilterRuleBodySchema },
  'GET /firewall/rules/nat': { msg: NatRuleListSchema },
  'GET /firewall/rules/mangle': { msg: MangleRuleListSchema },
  'GET /license': { msg: licenseSchema },
  'GET /port_forward': { msg: PortForwardMapSchema },
  'POST /port_forward': { body: PortForwardCreateBodySchema },
  'GET /system/status': { msg: systemStatusSchema },
  'GET /system/info': { msg: systemInfoSchema },
  'GET /system/config': { msg: systemConfigSchema },
  'PUT /system/config': { body: systemConfigUpdateSchema },
  'GET /traffic_logging': { msg: trafficLoggingConfigSchema },
  'PUT /traffic_logging': { body: trafficLoggingUpdateSchema },
  'GET /wireguard': { msg: WireguardServerMapSchema },
  'POST /wireguard': { msg: WireguardServerSchema, body: WireguardCreateBodySchema },
  'GET /wireguard/info': { msg: WireguardInfoSchema },
  'GET /wireguard/online': { msg: WireguardOnlineSchema, query: ListingQuerySchema },
  'GET /wireguard/:name': { msg: WireguardServerSchema },
  'PUT /wireguard/:name': { msg: WireguardServerSchema, body: WireguardUpdateBodySchema },
  'DELETE /wireguard/:name': { msg: successStringSchema },
  'GET /wireguard/:name/dump': { msg: WireguardDumpSchema },
  'GET /wireguard/:name/available_ips': { msg: AvailableIpsSchema },
  'GET /wireguard/:name/peers': { msg: WireguardPeersSchema, query: ListingQuerySchema },
};

/** The zod route schema of a route: path parameters from the URL, body/query/success `msg` from {@link ROUTES}. */
function routeSchema(method: string, url: string): Record<string, unknown> {
  const doc = ROUTES[`${method} ${url.replace(/^\/api\/v1/, '')}`] ?? {};
  const names = [...url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  const schema: Record<string, unknown> = {
    response: { 200: successEnvelopeSchema(doc.msg ?? z.unknown()), '4XX': errorEnvelopeSchema, '5XX': errorEnvelopeSchema },
  };
  if (names.length) schema.params = z.object(Object.fromEntries(names.map((n) => [n, z.string()])));
  if (doc.query) schema.querystring = doc.query;
  if (doc.body) {
    schema.body = doc.body;
    schema.consumes = ['application/x-www-form-urlencoded', 'application/json'];
  }
  return schema;
}

/**
 * Registers @fastify/swagger (before the routes, so it sees each one). Routes validate with `parseInput` rather
 * than fastify's schema option, so the document's schemas come from {@link ROUTES} through the zod type provider's
 * `jsonSchemaTransform`; only /api/v1 routes are described (HEAD twins and the /metrics text are left out).
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
      return jsonSchemaTransform({ schema: routeSchema(String(route.method), url) as never, url, route, ...rest });
    },
  });
}

/** The route plugin answering the document in the envelope's `msg`, like every /api/v1 answer. */
export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, async () => ok(app.swagger()));
}
