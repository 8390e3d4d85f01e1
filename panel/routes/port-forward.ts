// Port-forward routes: list per server, create, delete; the short `/port_forward` form and the server-scoped forms
// under `/wireguard/<name>/port_forward` and the published alias `/wireguard/<name>/port_forwarding`.
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { NameParamsSchema } from '../../shared/wire/common-wire.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import {
  PortForwardCreateBodySchema, PortForwardMapSchema, PortForwardParamsSchema, PortForwardSchema, ServerPortForwardParamsSchema,
} from '../schemas/port-forward.ts';

export const portForwardRoutes: PanelRoutes = async (app, { services }) => {
  const { portForwards } = services;
  const route = typed(app);

  for (const base of ['/wireguard/:name/port_forward', '/wireguard/:name/port_forwarding']) {
    route.get(base, { params: NameParamsSchema, msg: PortForwardMapSchema }, ({ params }) => portForwards.listOf(params().name));

    route.post(base, { params: NameParamsSchema, body: PortForwardCreateBodySchema, msg: PortForwardSchema }, ({ params, body }) => {
      const change = body();
      return portForwards.create(change, params().name);
    });

    route.delete(`${base}/:dst_port/:protocol`, { params: ServerPortForwardParamsSchema, msg: successStringSchema }, async ({ params }) => {
      const { name, dst_port, protocol } = params();
      await portForwards.remove(dst_port, protocol, name);
      return SUCCESS;
    });
  }

  route.post('/port_forward', { body: PortForwardCreateBodySchema, msg: PortForwardSchema }, ({ body }) => portForwards.create(body()));

  route.delete('/port_forward/:dst_port/:protocol', { params: PortForwardParamsSchema, msg: successStringSchema }, async ({ params }) => {
    const { dst_port, protocol } = params();
    await portForwards.remove(dst_port, protocol);
    return SUCCESS;
  });
};
