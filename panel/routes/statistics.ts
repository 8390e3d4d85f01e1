// Statistics route: GET /account/<name>/traffic_statistics/<YEAR>/<MONTH> (one TrafficStatisticsEntry per day).
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { TrafficStatisticsParamsSchema, TrafficStatisticsSchema } from '../schemas/statistics.ts';

export const statisticsRoutes: PanelRoutes = async (app, { services }) => {
  typed(app).get('/account/:name/traffic_statistics/:year/:month', { params: TrafficStatisticsParamsSchema, msg: TrafficStatisticsSchema }, ({ params }) => {
    const { name, year, month } = params();
    return services.statistics.month(name, year, month);
  });
};
