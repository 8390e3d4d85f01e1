// Statistics routes: GET /account/<name>/traffic_statistics/<YEAR>/<MONTH> (one TrafficStatisticsEntry per day) and
// GET /traffic_statistics?from=&to= (every account's stored days of a range in one answer: a platform's usage pass).
import { ok } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { TrafficStatisticsParamsSchema, TrafficStatisticsRangeQuerySchema } from '../schemas/statistics.ts';

export const statisticsRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/account/:name/traffic_statistics/:year/:month', async (request) => {
    const { name, year, month } = parseInput(TrafficStatisticsParamsSchema, request.params);
    return ok(services.statistics.month(name, year, month));
  });

  app.get('/traffic_statistics', async (request) => {
    const { from, to } = parseInput(TrafficStatisticsRangeQuerySchema, request.query);
    return ok(services.statistics.range(from, to));
  });
};
