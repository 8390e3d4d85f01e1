// DNS routes: GET/PUT /dns (DnsStatus; `The license is not active` without a valid license).
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { dnsStatusSchema, dnsUpdateSchema } from '../schemas/dns.ts';

export const dnsRoutes: PanelRoutes = async (app, { services }) => {
  const route = typed(app);
  route.get('/dns', { msg: dnsStatusSchema }, () => services.dns.get());

  /** Answers the DnsStatus after the change (the spec leaves the body open). */
  route.put('/dns', { body: dnsUpdateSchema, msg: dnsStatusSchema }, ({ body }) => services.dns.update(body()));
};
