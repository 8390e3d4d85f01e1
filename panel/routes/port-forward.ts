// Port-forward routes: list per server, create, delete; the short `/port_forward` form and the server-scoped forms
// under `/wireguard/<name>/port_forward` and the published alias `/wireguard/<name>/port_forwarding`.
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { NameParamsSchema } from '../schemas/common-wire.ts';
import { PortForwardCreateBodySchema, PortForwardParamsSchema, ServerPortForwardParamsSchema } from '../schemas/port-forward.ts';

export const portForwardRoutes: PanelRoutes = async (app, { services }) => {
  const { portForwards } = services;
  const nameOf = (params: unknown) => parseInput(NameParamsSchema, params).name;

  for (const base of ['/wireguard/:name/port_forward', '/wireguard/:name/port_forwarding']) {
    app.get(base, async (request) => ok(portForwards.listOf(nameOf(request.params))));

    app.post(base, async (request) =>
      ok(await portForwards.create(parseInput(PortForwardCreateBodySchema, request.body), nameOf(request.params))));

    app.delete(`${base}/:dst_port/:protocol`, async (request) => {
      const { name, dst_port, protocol } = parseInput(ServerPortForwardParamsSchema, request.params);
      await portForwards.remove(dst_port, protocol, name);
      return ok(SUCCESS);
    });
  }

  app.post('/port_forward', async (request) => ok(await portForwards.create(parseInput(PortForwardCreateBodySchema, request.body))));

  app.delete('/port_forward/:dst_port/:protocol', async (request) => {
    const { dst_port, protocol } = parseInput(PortForwardParamsSchema, request.params);
    await portForwards.remove(dst_port, protocol);
    return ok(SUCCESS);
  });
};
