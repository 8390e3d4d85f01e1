// WireGuard server routes: list/create/read/edit/delete, info, online sessions, dump, free addresses, peers, live
// firewall/tc text views and set_bandwidth.
import { z } from 'zod';
import { ENVELOPE_CLOSE, ENVELOPE_OPEN, sendJsonBody, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { NameParamsSchema } from '../../shared/wire/common-wire.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import { ListingQuerySchema } from '../schemas/listing.ts';
import {
  AvailableIpsSchema, WireguardCreateBodySchema, WireguardDumpSchema, WireguardInfoSchema, WireguardOnlineSchema, WireguardPeersSchema,
  WireguardServerMapSchema, WireguardServerSchema, WireguardUpdateBodySchema,
} from '../../shared/wire/wireguard.ts';

export const wireguardRoutes: PanelRoutes = async (app, { services }) => {
  const { servers, accounts, online, networkViews, serverBandwidth } = services;
  const route = typed(app);
  const named = { params: NameParamsSchema };
  const text = { ...named, msg: z.string() };

  route.get('/wireguard/info', { msg: WireguardInfoSchema }, () => servers.info());

  route.get('/wireguard/online', { query: ListingQuerySchema, msg: WireguardOnlineSchema }, ({ query }) => online.list(query()));

  route.get('/wireguard', { msg: WireguardServerMapSchema }, () => servers.list());

  route.post('/wireguard', { body: WireguardCreateBodySchema, msg: WireguardServerSchema }, ({ body }) => servers.create(body()));

  route.get('/wireguard/:name', { ...named, msg: WireguardServerSchema }, ({ params }) => servers.get(params().name));

  route.put('/wireguard/:name', { ...named, body: WireguardUpdateBodySchema, msg: WireguardServerSchema }, ({ params, body }) => {
    const { name } = params();
    return servers.update(name, body());
  });

  route.delete('/wireguard/:name', { ...named, msg: successStringSchema }, async ({ params }) => {
    await servers.remove(params().name);
    return SUCCESS;
  });

  route.get('/wireguard/:name/dump', { ...named, msg: WireguardDumpSchema }, ({ params }) => servers.dump(params().name));

  route.get('/wireguard/:name/available_ips', { ...named, msg: AvailableIpsSchema }, ({ params }) => servers.availableIps(params().name));

  route.get('/wireguard/:name/peers', { ...named, query: ListingQuerySchema, msg: WireguardPeersSchema }, ({ params, query, reply }) => {
    const server = servers.require(params().name);
    return sendJsonBody(reply, accounts.peersBody(server, query(), ENVELOPE_OPEN, ENVELOPE_CLOSE));
  });

  route.get('/wireguard/:name/firewall_nat_rules', text, ({ params }) => networkViews.serverNatRules(params().name));

  route.get('/wireguard/:name/firewall_filter_rules', text, ({ params }) => networkViews.serverFilterRules(params().name));

  route.get('/wireguard/:name/traffic_control', text, ({ params }) => networkViews.serverTrafficControl(params().name));

  route.put('/wireguard/:name/set_bandwidth', { ...named, msg: z.literal('') }, async ({ params }) => {
    await serverBandwidth.setBandwidth(params().name);
    return '' as const;
  });
};
