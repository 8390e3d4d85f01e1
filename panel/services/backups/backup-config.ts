// The backup schedule and FTP settings (GET/PUT /backups/config), kept in `settings` with the FTP password sealed.
import { type Clock } from '../../../shared/clock.ts';
import { ApiError } from '../../http/errors.ts';
import { checkBackupConfig, FTP_PASSWORD_MASK, type BackupConfig, type BackupConfigUpdate } from '../../schemas/backups.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { SettingsRepository } from '../../store/repositories/settings.ts';
import type { FtpTarget } from './ftp-upload.ts';

/** Settings key of the stored config. */
export const BACKUP_CONFIG_SETTING = 'backup_config';

/** The stored form: the answer's fields with the password sealed ('' when unset). */
type StoredConfig = Omit<BackupConfig, 'ftp_password'> & { ftp_password_sealed: string };

/** A never-changed config: no schedule, no FTP, keep 7. */
export const DEFAULT_BACKUP_CONFIG: StoredConfig = {
  backup_to_ftp: false, every_day: false, every_day_hour: 3, every_day_minute: 0, every_day_statistics: false,
  every_hour: false, every_hour_minute: 0, every_hour_statistics: false, ftp_server: '', ftp_server_port: 21,
  ftp_user: '', ftp_password_sealed: '', ftp_path: '', number_backups: 7,
};

/** Reads and changes the backup config; `onChange` (the scheduler) hears every change. */
export class BackupConfigService {
  private onChange: (() => void) | null = null;

  constructor(private readonly settings: SettingsRepository, private readonly box: SecretBox, private readonly clock: Clock) {}

  /** Called after every change (the scheduler re-reads the schedule). */
  listen(fn: () => void): void {
    this.onChange = fn;
  }

  private stored(): StoredConfig {
    return { ...DEFAULT_BACKUP_CONFIG, ...(this.settings.get<Partial<StoredConfig>>(BACKUP_CONFIG_SETTING) ?? {}) };
  }

  /** The answer: the password masked. */
  get(): BackupConfig {
    const { ftp_password_sealed, ...rest } = this.stored();
    return { ...rest, ftp_password: ftp_password_sealed ? FTP_PASSWORD_MASK : '' };
  }

  /** The FTP target with the password opened (only for an upload; never logged). */
  ftpTarget(): FtpTarget {
    const c = this.stored();
    return {
      server: c.ftp_server, port: c.ftp_server_port, user: c.ftp_user, path: c.ftp_path,
      password: c.ftp_password_sealed ? this.box.open(c.ftp_password_sealed) : '',
    };
  }

  /**
   * PUT /backups/config (every field given, formats checked by the schema). The password {@link FTP_PASSWORD_MASK}
   * keeps the stored one. With `backup_to_ftp` the server, user and password must be filled.
   */
  update(change: BackupConfigUpdate): BackupConfig {
    const before = this.stored();
    const { ftp_password, ...rest } = change;
    const sealed = ftp_password === FTP_PASSWORD_MASK ? before.ftp_password_sealed : ftp_password ? this.box.seal(ftp_password) : '';
    const failure = checkBackupConfig(rest, sealed !== '');
    if (failure) throw new ApiError(failure);
    const next: StoredConfig = { ...rest, ftp_password_sealed: sealed };
    this.settings.set(BACKUP_CONFIG_SETTING, next, this.clock.now());
    this.onChange?.();
    return this.get();
  }

  /** Re-reads the store (after a restore replaced it). */
  reloaded(): void {
    this.onChange?.();
  }
}
