// Zod schemas of Backup, BackupConfig and the /backups payloads (POST statistics, PUT restore, PUT config).
import { z } from 'zod';
import { E, flagFormatError, OWN } from '../../shared/wire/error-texts.ts';
import { field, intInRange, toBoolean, toInteger } from '../../shared/wire/form.ts';

/** One archive of GET /backups and POST /backups. */
export const backupSchema = z.object({
  backup_name: z.string(),
  /** ISO 8601 with milliseconds and the host's offset (`2026-11-23T13:00:00.000+00:00`). */
  creation_date: z.string(),
  /** Bytes of the zip file. */
  size: z.number().int(),
});
export type Backup = z.infer<typeof backupSchema>;

/** GET/PUT /backups/config answer; `ftp_password` is `''` when unset, else {@link FTP_PASSWORD_MASK}. */
export const backupConfigSchema = z.object({
  backup_to_ftp: z.boolean(),
  every_day: z.boolean(),
  every_day_hour: z.number().int(),
  every_day_minute: z.number().int(),
  every_day_statistics: z.boolean(),
  every_hour: z.boolean(),
  every_hour_minute: z.number().int(),
  every_hour_statistics: z.boolean(),
  ftp_server: z.string(),
  ftp_server_port: z.number().int(),
  ftp_user: z.string(),
  ftp_password: z.string(),
  ftp_path: z.string(),
  number_backups: z.number().int(),
});
export type BackupConfig = z.infer<typeof backupConfigSchema>;

/** What GET answers for a stored FTP password; a PUT carrying it keeps the stored one. */
export const FTP_PASSWORD_MASK = '********';

function flag(name: string) {
  return field(flagFormatError(name), toBoolean);
}

/** Free text of at most 1024 printable characters, trimmed. */
function text() {
  return field(OWN.BACKUP_WRONG_FTP_TEXT, (v) =>
    typeof v === 'string' && v.length <= 1024 && !/[\u0000-\u001f\u007f]/.test(v) ? v.trim() : undefined);
}

/**
 * PUT /backups/config: every field required (the spec), checked in the order of its error list: the hourly
 * minute, the daily hour and minute, `number_backups`, then the flags and FTP fields' formats. The
 * `... must be filled` checks need `backup_to_ftp` and run in {@link checkBackupConfig}.
 */
export const backupConfigUpdateSchema = z.object({
  every_hour_minute: intInRange(0, 59, E.BACKUP_CFG_HOUR_MINUTE),
  every_day_hour: intInRange(0, 23, E.BACKUP_CFG_DAY_HOUR),
  every_day_minute: intInRange(0, 59, E.BACKUP_CFG_DAY_MINUTE),
  number_backups: field(E.BACKUP_CFG_NUMBER, (v) => {
    const n = toInteger(v);
    return n !== undefined && n > 0 && n <= 100_000 ? n : undefined;
  }),
  backup_to_ftp: flag('backup_to_ftp'),
  every_day: flag('every_day'),
  every_day_statistics: flag('every_day_statistics'),
  every_hour: flag('every_hour'),
  every_hour_statistics: flag('every_hour_statistics'),
  ftp_server: text(),
  ftp_server_port: intInRange(1, 65535, OWN.BACKUP_WRONG_FTP_PORT),
  ftp_user: text(),
  ftp_password: text(),
  ftp_path: text(),
});
export type BackupConfigUpdate = z.infer<typeof backupConfigUpdateSchema>;

/** The spec's `... must be filled` checks of a config that uploads to FTP; returns the first failing text or null. */
export function checkBackupConfig(config: Pick<BackupConfig, 'backup_to_ftp' | 'ftp_server' | 'ftp_user'>, hasPassword: boolean): string | null {
  if (!config.backup_to_ftp) return null;
  if (!config.ftp_server) return E.BACKUP_CFG_FTP_SERVER;
  if (!config.ftp_user) return E.BACKUP_CFG_FTP_USER;
  if (!hasPassword) return E.BACKUP_CFG_FTP_PASSWORD;
  return null;
}

/** POST /backups: `statistics` optional, `0` or `1`. */
export const backupCreateSchema = z.object({
  statistics: field(flagFormatError('statistics'), toBoolean).optional(),
});

/** PUT /backups/restore: `backup_name` required (an absent or malformed name is an unknown backup). */
export const backupRestoreSchema = z.object({
  backup_name: field(E.BACKUP_NO_SUCH, (v) => (typeof v === 'string' ? v : undefined)),
});

/** GET /backups. */
export const backupListSchema = z.object({ backups: z.array(backupSchema) });

/** GET /backups/<backup_name> (the archive itself, no envelope). */
export const BackupNameParamsSchema = z.object({ backup_name: z.string() });
