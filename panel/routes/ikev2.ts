// IKEv2 routes: /ikev2/* (config, PKI, enable, advanced settings, online, info) and the account profiles.
import { z } from 'zod';
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { NameParamsSchema } from '../../shared/wire/common-wire.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import {
  advancedSettingsSchema, generateCaSchema, generateServerSchema, ikev2AdvancedSettingsSchema, ikev2ConfigSchema, ikev2EnableSchema,
  ikev2InfoSchema, ikev2OnlineSchema, importCaSchema,
} from '../schemas/ikev2.ts';

export const ikev2Routes: PanelRoutes = async (app, { services }) => {
  const { service, sessions, profiles } = services.ikev2;
  const route = typed(app);
  const config = { msg: ikev2ConfigSchema };
  const advanced = { msg: ikev2AdvancedSettingsSchema };

  route.get('/ikev2/info', { msg: ikev2InfoSchema }, () => sessions.info());
  route.get('/ikev2/config', config, () => service.config());
  route.put('/ikev2/import_ca_rsa', { ...config, body: importCaSchema }, ({ body }) => {
    const { ca_cert, ca_key } = body();
    return service.importCa(ca_cert, ca_key);
  });
  route.put('/ikev2/generate_ca_rsa', { ...config, body: generateCaSchema }, ({ body }) => service.generateCa(body()));
  route.delete('/ikev2/delete_ca_rsa', config, () => service.deleteCa());
  route.put('/ikev2/generate_server_rsa', { ...config, body: generateServerSchema }, ({ body }) => service.generateServer(body()));
  route.delete('/ikev2/delete_server_rsa', config, () => service.deleteServer());
  route.put('/ikev2', { ...config, body: ikev2EnableSchema }, ({ body }) => service.setEnabled(body().enabled));
  route.get('/ikev2/advanced_settings', advanced, () => service.advanced());
  route.put('/ikev2/advanced_settings', { ...advanced, body: advancedSettingsSchema }, ({ body }) => service.setAdvanced(body()));
  route.put('/ikev2/advanced_settings/default', advanced, () => service.resetAdvanced());
  route.get('/ikev2/online', { msg: ikev2OnlineSchema }, () => sessions.online());
  route.delete('/ikev2/online/:name', { params: NameParamsSchema, msg: successStringSchema }, async ({ params }) => {
    await sessions.drop(params().name);
    return SUCCESS;
  });
  // Extension: whether profiles carry the account password (off by default; the apps store it in clear).
  route.put('/ikev2/profile_password', { body: ikev2EnableSchema, msg: successStringSchema }, ({ body }) => {
    service.setProfilePassword(body().enabled);
    return SUCCESS;
  });

  const profile = { params: NameParamsSchema, msg: z.string() };
  route.get('/account/:name/ikev2_profile', profile, ({ params }) => profiles.sswan(params().name));
  // Extension: the same account as an Apple configuration profile (XML plist text).
  route.get('/account/:name/ikev2_mobileconfig', profile, ({ params }) => profiles.mobileconfig(params().name));
  // Extension: a PowerShell script that sets up Windows' built-in IKEv2 client for the account.
  route.get('/account/:name/ikev2_windows', profile, ({ params }) => profiles.windows(params().name));
};
