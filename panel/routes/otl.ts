// One-time-link routes: GET /account/<name>/otl, GET /otl/list and the settings; PUT /otl/config*, DELETE /otl/<key> (extensions).
import { z } from 'zod';
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { NameParamsSchema } from '../../shared/wire/common-wire.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import {
  otlIkev2ConfigSchema, otlIkev2ConfigUpdateSchema, OtlKeyParamsSchema, otlListSchema, otlPageConfigSchema, otlPageConfigUpdateSchema,
  otlWireguardConfigSchema, otlWireguardConfigUpdateSchema,
} from '../../shared/wire/otl.ts';

export const otlRoutes: PanelRoutes = async (app, { services }) => {
  const { links, settings } = services.otl;
  const route = typed(app);

  /** Answers the link (`{baseUrl}/otl/<key>`). */
  route.get('/account/:name/otl', { params: NameParamsSchema, msg: z.string() }, ({ params }) => links.create(params().name));

  route.get('/otl/list', { msg: otlListSchema }, () => links.list());
  route.get('/otl/config', { msg: otlPageConfigSchema }, () => settings.page());
  route.get('/otl/config_wireguard', { msg: otlWireguardConfigSchema }, () => settings.wireguard());
  route.get('/otl/config_ikev2', { msg: otlIkev2ConfigSchema }, () => settings.ikev2());

  route.put('/otl/config', { body: otlPageConfigUpdateSchema, msg: otlPageConfigSchema }, ({ body }) => settings.updatePage(body()));
  route.put('/otl/config_wireguard', { body: otlWireguardConfigUpdateSchema, msg: otlWireguardConfigSchema }, ({ body }) =>
    settings.updateWireguard(body()));
  route.put('/otl/config_ikev2', { body: otlIkev2ConfigUpdateSchema, msg: otlIkev2ConfigSchema }, ({ body }) => settings.updateIkev2(body()));

  route.delete('/otl/:key', { params: OtlKeyParamsSchema, msg: successStringSchema }, ({ params }) => {
    links.revoke(params().key);
    return SUCCESS;
  });
};
