// Backup routes: list, create, download (no envelope), restore, and the schedule config.
import { createReadStream } from 'node:fs';
import { ok, SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { parseInput } from '../http/validate.ts';
import { backupConfigUpdateSchema, backupCreateSchema, backupRestoreSchema } from '../schemas/backups.ts';

export const backupRoutes: PanelRoutes = async (app, { services }) => {
  app.get('/backups', async () => ok({ backups: services.backups.list() }));

  app.post('/backups', async (request) => {
    const { statistics } = parseInput(backupCreateSchema, request.body);
    return ok(await services.backups.create(statistics ?? false));
  });

  app.put('/backups/restore', async (request) => {
    const { backup_name } = parseInput(backupRestoreSchema, request.body);
    await services.backups.restore(backup_name);
    return ok(SUCCESS);
  });

  app.get('/backups/config', async () => ok(services.backupConfig.get()));

  app.put('/backups/config', async (request) => ok(services.backupConfig.update(parseInput(backupConfigUpdateSchema, request.body))));

  app.get<{ Params: { backup_name: string } }>('/backups/:backup_name', async (request, reply) => {
    const path = services.backups.pathOf(request.params.backup_name);
    return reply
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="${request.params.backup_name}"`)
      .header('cache-control', 'no-store')
      .send(createReadStream(path));
  });

  app.addHook('onClose', async () => services.backupScheduler.stop());
};
