// Account routes: list/create/read/edit/delete, client configuration as text and QR code, live dump, live mangle/tc views.
import { ENVELOPE_CLOSE, ENVELOPE_OPEN, ok, sendJsonBody, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { AccountCreateBodySchema, AccountUpdateBodySchema } from '../schemas/account.ts';
import { NameParamsSchema } from '../schemas/common-wire.ts';
import { ListingQuerySchema } from '../schemas/listing.ts';

export const accountRoutes: PanelRoutes = async (app, { services }) => {
  const { accounts, accountConfig, networkViews } = services;
  const nameOf = (params: unknown) => parseInput(NameParamsSchema, params).name;

  app.get('/account', async (request, reply) =>
    sendJsonBody(reply, accounts.listBody(parseInput(ListingQuerySchema, request.query), ENVELOPE_OPEN, ENVELOPE_CLOSE)));

  app.post('/account', async (request) => ok(await accounts.create(parseInput(AccountCreateBodySchema, request.body))));

  app.get('/account/:name', async (request) => ok(accounts.get(nameOf(request.params))));

  app.put('/account/:name', async (request) => {
    const name = nameOf(request.params);
    return ok(await accounts.update(name, parseInput(AccountUpdateBodySchema, request.body)));
  });

  app.delete('/account/:name', async (request) => {
    await accounts.remove(nameOf(request.params));
    return ok(SUCCESS);
  });

  app.get('/account/:name/config_text', async (request) =>
    ok(accountConfig.configText(accounts.require(nameOf(request.params)))));

  app.get('/account/:name/config_qr', async (request) =>
    ok(await accountConfig.configQr(accounts.require(nameOf(request.params)))));

  app.get('/account/:name/dump', async (request) => ok(await accountConfig.dump(accounts.require(nameOf(request.params)))));

  app.get('/account/:name/firewall_mangle_rules', async (request) => ok(await networkViews.accountMangleRules(nameOf(request.params))));

  app.get('/account/:name/traffic_control', async (request) => ok(await networkViews.accountTrafficControl(nameOf(request.params))));
};
