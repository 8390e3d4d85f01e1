// Firewall routes: info, conf (read, change), filter rules (list, add at top or end, delete), NAT and mangle listings.
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { FilterRuleBodySchema, FirewallConfBodySchema, RuleNameParamsSchema } from '../schemas/firewall.ts';

export const firewallRoutes: PanelRoutes = async (app, { services }) => {
  const { firewall, networkViews } = services;

  app.get('/firewall/info', async () => ok(await firewall.info()));

  app.get('/firewall/conf', async () => ok(firewall.getConf()));

  app.put('/firewall/conf', async (request) => {
    await firewall.updateConf(parseInput(FirewallConfBodySchema, request.body));
    return ok(SUCCESS);
  });

  app.get('/firewall/rules/filter', async () => ok(firewall.listRules()));

  app.post('/firewall/rules/filter/top', async (request) => {
    await firewall.addRule(parseInput(FilterRuleBodySchema, request.body), 'top');
    return ok(SUCCESS);
  });

  app.post('/firewall/rules/filter/end', async (request) => {
    await firewall.addRule(parseInput(FilterRuleBodySchema, request.body), 'end');
    return ok(SUCCESS);
  });

  app.delete('/firewall/rules/filter/:rule_name', async (request) => {
    await firewall.deleteRule(parseInput(RuleNameParamsSchema, request.params).rule_name);
    return ok(SUCCESS);
  });

  app.get('/firewall/rules/nat', async () => ok(await networkViews.natList()));

  app.get('/firewall/rules/mangle', async () => ok(await networkViews.mangleList()));
};
