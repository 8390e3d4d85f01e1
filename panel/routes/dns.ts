// DNS routes: GET/PUT /dns (DnsStatus; `The license is not active` without a valid license).
import { ok } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { dnsUpdateSchema } from '../schemas/dns.ts';

export const dnsRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/dns', async () => ok(await services.dns.get()));

  /** Answers the DnsStatus after the change (the spec leaves the body open). */
  app.put('/dns', async (request) => {
    const change = parseInput(dnsUpdateSchema, request.body);
    return ok(await services.dns.update(change));
  });
};
