// System routes: status, host info, reload, configuration (get, change, reset).
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { systemConfigUpdateSchema } from '../schemas/system.ts';
import { collectSystemInfo } from '../services/system-info.ts';

export const systemRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/system/status', async () => ok(await services.system.status()));

  app.get('/system/info', async () => ok(collectSystemInfo()));

  app.put('/system/reload', async () => {
    await services.system.reload();
    return ok(SUCCESS);
  });

  app.get('/system/config', async () => ok(services.systemConfig.get()));

  app.put('/system/config', async (request) => {
    const change = parseInput(systemConfigUpdateSchema, request.body);
    return ok(services.systemConfig.update(change));
  });

  app.put('/system/config/default', async () => ok(services.systemConfig.reset()));
};
