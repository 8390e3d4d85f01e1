// License route: GET /license (the key masked; `The license is not active` without a valid license).
import { ok } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';

export const licenseRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/license', async () => ok(services.license.status()));
};
