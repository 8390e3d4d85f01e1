// Traffic logging routes: GET/PUT /traffic_logging (TrafficLoggingConfig).
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { trafficLoggingConfigSchema, trafficLoggingUpdateSchema } from '../schemas/traffic-logging.ts';

export const trafficLoggingRoutes: PanelRoutes = async (app, { services }) => {
  const route = typed(app);
  route.get('/traffic_logging', { msg: trafficLoggingConfigSchema }, () => services.trafficLogging.get());

  route.put('/traffic_logging', { body: trafficLoggingUpdateSchema, msg: trafficLoggingConfigSchema }, ({ body }) =>
    services.trafficLogging.update(body()));

  // A built app (tests, inject) that enabled logging stops it when closed; server.ts also stops it on shutdown.
  app.addHook('onClose', async () => services.trafficLogging.stop());
};
