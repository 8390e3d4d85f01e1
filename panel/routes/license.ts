// License route: GET /license (the key masked; `The license is not active` without a valid license).
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { licenseSchema } from '../schemas/license.ts';

export const licenseRoutes: PanelRoutes = async (app, { services }) => {
  typed(app).get('/license', { msg: licenseSchema }, () => services.license.status());
};
