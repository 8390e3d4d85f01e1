// Traffic logging routes: GET/PUT /traffic_logging (TrafficLoggingConfig).
import { ok } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { trafficLoggingUpdateSchema } from '../schemas/traffic-logging.ts';

export const trafficLoggingRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/traffic_logging', async () => ok(services.trafficLogging.get()));

  app.put('/traffic_logging', async (request) => {
    const change = parseInput(trafficLoggingUpdateSchema, request.body);
    return ok(await services.trafficLogging.update(change));
  });

  // A built app (tests, inject) that enabled logging stops it when closed; server.ts also stops it on shutdown.
  app.addHook('onClose', async () => services.trafficLogging.stop());
};
