// WireGuard server routes: list/create/read/edit/delete, info, online sessions, dump, free addresses, peers, live
// firewall/tc text views and set_bandwidth.
import { ENVELOPE_CLOSE, ENVELOPE_OPEN, ok, sendJsonBody, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { NameParamsSchema } from '../schemas/common-wire.ts';
import { ListingQuerySchema } from '../schemas/listing.ts';
import { WireguardCreateBodySchema, WireguardUpdateBodySchema } from '../schemas/wireguard.ts';

export const wireguardRoutes: PanelRoutes = async (app, { services }) => {
  const { servers, accounts, online, networkViews, serverBandwidth } = services;
  const nameOf = (params: unknown) => parseInput(NameParamsSchema, params).name;

  app.get('/wireguard/info', async () => ok(await servers.info()));

  app.get('/wireguard/online', async (request) => ok(await online.list(parseInput(ListingQuerySchema, request.query))));

  app.get('/wireguard', async () => ok(servers.list()));

  app.post('/wireguard', async (request) => ok(await servers.create(parseInput(WireguardCreateBodySchema, request.body))));

  app.get('/wireguard/:name', async (request) => ok(servers.get(nameOf(request.params))));

  app.put('/wireguard/:name', async (request) => {
    const name = nameOf(request.params);
    return ok(await servers.update(name, parseInput(WireguardUpdateBodySchema, request.body)));
  });

  app.delete('/wireguard/:name', async (request) => {
    await servers.remove(nameOf(request.params));
    return ok(SUCCESS);
  });

  app.get('/wireguard/:name/dump', async (request) => ok(await servers.dump(nameOf(request.params))));

  app.get('/wireguard/:name/available_ips', async (request) => ok(servers.availableIps(nameOf(request.params))));

  app.get('/wireguard/:name/peers', async (request, reply) => {
    const server = servers.require(nameOf(request.params));
    return sendJsonBody(reply, accounts.peersBody(server, parseInput(ListingQuerySchema, request.query), ENVELOPE_OPEN, ENVELOPE_CLOSE));
  });

  app.get('/wireguard/:name/firewall_nat_rules', async (request) => ok(await networkViews.serverNatRules(nameOf(request.params))));

  app.get('/wireguard/:name/firewall_filter_rules', async (request) => ok(await networkViews.serverFilterRules(nameOf(request.params))));

  app.get('/wireguard/:name/traffic_control', async (request) => ok(await networkViews.serverTrafficControl(nameOf(request.params))));

  app.put('/wireguard/:name/set_bandwidth', async (request) => {
    await serverBandwidth.setBandwidth(nameOf(request.params));
    return ok('');
  });
};
