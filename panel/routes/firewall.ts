// Firewall routes: info, conf (read, change), filter rules (list, add at top or end, delete), NAT and mangle listings.
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import {
  FilterRuleBodySchema, FilterRuleListSchema, FirewallConfBodySchema, FirewallConfSchema, FirewallInfoSchema, MangleRuleListSchema,
  NatRuleListSchema, RuleNameParamsSchema,
} from '../schemas/firewall.ts';

export const firewallRoutes: PanelRoutes = async (app, { services }) => {
  const { firewall, networkViews } = services;
  const route = typed(app);

  route.get('/firewall/info', { msg: FirewallInfoSchema }, () => firewall.info());

  route.get('/firewall/conf', { msg: FirewallConfSchema }, () => firewall.getConf());

  route.put('/firewall/conf', { body: FirewallConfBodySchema, msg: successStringSchema }, async ({ body }) => {
    await firewall.updateConf(body());
    return SUCCESS;
  });

  route.get('/firewall/rules/filter', { msg: FilterRuleListSchema }, () => firewall.listRules());

  for (const position of ['top', 'end'] as const) {
    route.post(`/firewall/rules/filter/${position}`, { body: FilterRuleBodySchema, msg: successStringSchema }, async ({ body }) => {
      await firewall.addRule(body(), position);
      return SUCCESS;
    });
  }

  route.delete('/firewall/rules/filter/:rule_name', { params: RuleNameParamsSchema, msg: successStringSchema }, async ({ params }) => {
    await firewall.deleteRule(params().rule_name);
    return SUCCESS;
  });

  route.get('/firewall/rules/nat', { msg: NatRuleListSchema }, () => networkViews.natList());

  route.get('/firewall/rules/mangle', { msg: MangleRuleListSchema }, () => networkViews.mangleList());
};
