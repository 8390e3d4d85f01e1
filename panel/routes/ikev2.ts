// IKEv2 routes: /ikev2/* (config, PKI, enable, advanced settings, online, info) and the account profiles.
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { NameParamsSchema } from '../schemas/common-wire.ts';
import {
  advancedSettingsSchema, generateCaSchema, generateServerSchema, ikev2EnableSchema, importCaSchema,
} from '../schemas/ikev2.ts';

export const ikev2Routes: PanelRoutes = async (app, { services }) => {
  const { service, sessions, profiles } = services.ikev2;
  const nameOf = (params: unknown) => parseInput(NameParamsSchema, params).name;

  app.get('/ikev2/info', async () => ok(await sessions.info()));
  app.get('/ikev2/config', async () => ok(service.config()));
  app.put('/ikev2/import_ca_rsa', async (request) => {
    const body = parseInput(importCaSchema, request.body);
    return ok(await service.importCa(body.ca_cert, body.ca_key));
  });
  app.put('/ikev2/generate_ca_rsa', async (request) => ok(await service.generateCa(parseInput(generateCaSchema, request.body))));
  app.delete('/ikev2/delete_ca_rsa', async () => ok(await service.deleteCa()));
  app.put('/ikev2/generate_server_rsa', async (request) =>
    ok(await service.generateServer(parseInput(generateServerSchema, request.body))));
  app.delete('/ikev2/delete_server_rsa', async () => ok(await service.deleteServer()));
  app.put('/ikev2', async (request) => ok(await service.setEnabled(parseInput(ikev2EnableSchema, request.body).enabled)));
  app.get('/ikev2/advanced_settings', async () => ok(service.advanced()));
  app.put('/ikev2/advanced_settings', async (request) =>
    ok(await service.setAdvanced(parseInput(advancedSettingsSchema, request.body))));
  app.put('/ikev2/advanced_settings/default', async () => ok(await service.resetAdvanced()));
  app.get('/ikev2/online', async () => ok(await sessions.online()));
  app.delete('/ikev2/online/:name', async (request) => {
    await sessions.drop(nameOf(request.params));
    return ok(SUCCESS);
  });
  // Extension: whether profiles carry the account password (off by default; the apps store it in clear).
  app.put('/ikev2/profile_password', async (request) => {
    service.setProfilePassword(parseInput(ikev2EnableSchema, request.body).enabled);
    return ok(SUCCESS);
  });

  app.get('/account/:name/ikev2_profile', async (request) => ok(profiles.sswan(nameOf(request.params))));
  // Extension: the same account as an Apple configuration profile (XML plist text).
  app.get('/account/:name/ikev2_mobileconfig', async (request) => ok(profiles.mobileconfig(nameOf(request.params))));
  // Extension: a PowerShell script that sets up Windows' built-in IKEv2 client for the account.
  app.get('/account/:name/ikev2_windows', async (request) => ok(profiles.windows(nameOf(request.params))));
};
