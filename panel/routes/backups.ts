// Backup routes: list, create, download (no envelope), restore, and the schedule config.
import { createReadStream } from 'node:fs';
import { SUCCESS } from '../http/envelope.ts';
import type { PanelRoutes } from '../http/route-plugin.ts';
import { typed } from '../http/typed-route.ts';
import {
  backupConfigSchema, backupConfigUpdateSchema, backupCreateSchema, backupListSchema, BackupNameParamsSchema, backupRestoreSchema,
  backupSchema,
} from '../schemas/backups.ts';
import { successStringSchema } from '../../shared/wire/envelope.ts';
import { z } from 'zod';

export const backupRoutes: PanelRoutes = async (app, { services }) => {
  const route = typed(app);

  route.get('/backups', { msg: backupListSchema }, () => ({ backups: services.backups.list() }));

  route.post('/backups', { body: backupCreateSchema, msg: backupSchema }, ({ body }) => services.backups.create(body().statistics ?? false));

  route.put('/backups/restore', { body: backupRestoreSchema, msg: successStringSchema }, async ({ body }) => {
    await services.backups.restore(body().backup_name);
    return SUCCESS;
  });

  route.get('/backups/config', { msg: backupConfigSchema }, () => services.backupConfig.get());

  route.put('/backups/config', { body: backupConfigUpdateSchema, msg: backupConfigSchema }, ({ body }) => services.backupConfig.update(body()));

  /** The archive itself (application/zip), no envelope. */
  route.get('/backups/:backup_name', { params: BackupNameParamsSchema, msg: z.never(), produces: 'application/zip' }, ({ params, reply }) => {
    const { backup_name } = params();
    const path = services.backups.pathOf(backup_name);
    return reply
      .header('content-type', 'application/zip')
      .header('content-disposition', `attachment; filename="${backup_name}"`)
      .header('cache-control', 'no-store')
      .send(createReadStream(path));
  });

  app.addHook('onClose', async () => services.backupScheduler.stop());
};
