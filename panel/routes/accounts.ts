// Account routes: list/create/read/edit/delete, client configuration as text and QR code, live dump, live mangle/tc views.
import { z } from 'zod';
import { ENVELOPE_CLOSE, ENVELOPE_OPEN, sendJsonBody, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import {
  AccountConfigQrSchema, AccountConfigTextSchema, AccountCreateBodySchema, AccountDumpSchema, AccountListSchema, AccountSchema,
  AccountUpdateBodySchema,
} from '../../shared/wire/account.ts';
import { NameParamsSchema } from '../../shared/wire/common-wire.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import { ListingQuerySchema } from '../schemas/listing.ts';

export const accountRoutes: PanelRoutes = async (app, { services }) => {
  const { accounts, accountConfig, networkViews } = services;
  const route = typed(app);
  const named = { params: NameParamsSchema };

  route.get('/account', { query: ListingQuerySchema, msg: AccountListSchema }, ({ query, reply }) =>
    sendJsonBody(reply, accounts.listBody(query(), ENVELOPE_OPEN, ENVELOPE_CLOSE)));

  route.post('/account', { body: AccountCreateBodySchema, msg: AccountSchema }, ({ body }) => accounts.create(body()));

  route.get('/account/:name', { ...named, msg: AccountSchema }, ({ params }) => accounts.get(params().name));

  route.put('/account/:name', { ...named, body: AccountUpdateBodySchema, msg: AccountSchema }, ({ params, body }) => {
    const { name } = params();
    return accounts.update(name, body());
  });

  route.delete('/account/:name', { ...named, msg: successStringSchema }, async ({ params }) => {
    await accounts.remove(params().name);
    return SUCCESS;
  });

  route.get('/account/:name/config_text', { ...named, msg: AccountConfigTextSchema }, ({ params }) =>
    accountConfig.configText(accounts.require(params().name)));

  route.get('/account/:name/config_qr', { ...named, msg: AccountConfigQrSchema }, ({ params }) =>
    accountConfig.configQr(accounts.require(params().name)));

  route.get('/account/:name/dump', { ...named, msg: AccountDumpSchema }, ({ params }) => accountConfig.dump(accounts.require(params().name)));

  route.get('/account/:name/firewall_mangle_rules', { ...named, msg: z.string() }, ({ params }) => networkViews.accountMangleRules(params().name));

  route.get('/account/:name/traffic_control', { ...named, msg: z.string() }, ({ params }) => networkViews.accountTrafficControl(params().name));
};
