// System routes: status, host info, reload, configuration (get, change, reset).
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import { systemConfigSchema, systemConfigUpdateSchema, systemInfoSchema, systemStatusSchema } from '../../shared/wire/system.ts';
import { collectSystemInfo } from '../services/system-info.ts';

export const systemRoutes: PanelRoutes = async (app, { services }) => {
  const route = typed(app);

  route.get('/system/status', { msg: systemStatusSchema }, () => services.system.status());

  route.get('/system/info', { msg: systemInfoSchema }, () => collectSystemInfo());

  route.put('/system/reload', { msg: successStringSchema }, async () => {
    await services.system.reload();
    return SUCCESS;
  });

  route.get('/system/config', { msg: systemConfigSchema }, () => services.systemConfig.get());

  route.put('/system/config', { body: systemConfigUpdateSchema, msg: systemConfigSchema }, ({ body }) => services.systemConfig.update(body()));

  route.put('/system/config/default', { msg: systemConfigSchema }, () => services.systemConfig.reset());
};
