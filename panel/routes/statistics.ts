// Statistics route: GET /account/<name>/traffic_statistics/<YEAR>/<MONTH> (one TrafficStatisticsEntry per day).
import { ok } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { TrafficStatisticsParamsSchema } from '../schemas/statistics.ts';

export const statisticsRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/account/:name/traffic_statistics/:year/:month', async (request) => {
    const { name, year, month } = parseInput(TrafficStatisticsParamsSchema, request.params);
    return ok(services.statistics.month(name, year, month));
  });
};
