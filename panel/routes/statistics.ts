// Statistics routes: GET /account/<name>/traffic_statistics/<YEAR>/<MONTH> (one TrafficStatisticsEntry per day) and
// GET /traffic_statistics?from=&to= (every account's stored days of a range in one answer: a platform's usage pass).
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { TrafficStatisticsParamsSchema, TrafficStatisticsRangeQuerySchema, TrafficStatisticsSchema } from '../../shared/wire/statistics.ts';

export const statisticsRoutes: PanelRoutes = async (app, { services }) => {
  typed(app).get('/account/:name/traffic_statistics/:year/:month', { params: TrafficStatisticsParamsSchema, msg: TrafficStatisticsSchema }, ({ params }) => {
    const { name, year, month } = params();
    return services.statistics.month(name, year, month);
  });

  typed(app).get('/traffic_statistics', { query: TrafficStatisticsRangeQuerySchema, msg: TrafficStatisticsSchema }, ({ query }) => {
    const { from, to } = query();
    return services.statistics.range(from, to);
  });
};
