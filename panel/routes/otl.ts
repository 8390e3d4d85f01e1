// One-time-link routes: GET /account/<name>/otl, GET /otl/list and the settings; PUT /otl/config*, DELETE /otl/<key> (extensions).
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { NameParamsSchema } from '../schemas/common-wire.ts';
import { otlIkev2ConfigUpdateSchema, otlPageConfigUpdateSchema, otlWireguardConfigUpdateSchema } from '../schemas/otl.ts';

export const otlRoutes: PanelRoutes = async (app, { services }) => {
  const { links, settings } = services.otl;

  app.get('/account/:name/otl', async (request) => ok(links.create(parseInput(NameParamsSchema, request.params).name)));

  app.get('/otl/list', async () => ok(links.list()));
  app.get('/otl/config', async () => ok(settings.page()));
  app.get('/otl/config_wireguard', async () => ok(settings.wireguard()));
  app.get('/otl/config_ikev2', async () => ok(settings.ikev2()));

  app.put('/otl/config', async (request) => ok(settings.updatePage(parseInput(otlPageConfigUpdateSchema, request.body))));
  app.put('/otl/config_wireguard', async (request) =>
    ok(settings.updateWireguard(parseInput(otlWireguardConfigUpdateSchema, request.body))));
  app.put('/otl/config_ikev2', async (request) => ok(settings.updateIkev2(parseInput(otlIkev2ConfigUpdateSchema, request.body))));

  app.delete<{ Params: { key: string } }>('/otl/:key', async (request) => {
    links.revoke(request.params.key);
    return ok(SUCCESS);
  });
};
