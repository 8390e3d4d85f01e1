// Backups: create (snapshot + zip, retention, FTP upload), list, locate for download, and verified restore.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ApiError, E, isApiError } from '../../http/errors.ts';
import type { Backup } from '../../schemas/backups.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { Db } from '../../store/db.ts';
import { DATABASE_NAME, DEFAULT_LIMITS, KEY_CHECK_PLAIN, type ReaderLimits } from './archive-format.ts';
import { extractArchive, extractedPath } from './archive-reader.ts';
import { writeArchive } from './archive-writer.ts';
import type { BackupConfigService } from './backup-config.ts';
import { BackupFolder } from './backup-folder.ts';
import { BACKUP_KEY_FILE, readWrappedKeyFile } from './backup-key.ts';
import type { FtpUploader } from './ftp-upload.ts';
import { applySnapshot, prepareSnapshot } from './store-restore.ts';

/** What the backup service is built from. */
export interface BackupServiceDeps {
  db: Db;
  /** Archives live in `<dataDir>/backups`. */
  dataDir: string;
  box: SecretBox;
  clock: () => Date;
  logger?: Logger;
  config: BackupConfigService;
  ftp: FtpUploader;
  panelVersion: string;
  /** The data-plane files of an archive (`<interface>.conf` → text), rendered from the store. */
  dataplaneFiles: () => Map<string, string>;
  /** Whether the panel status is `OK` (restore refuses otherwise). */
  statusOk: () => Promise<boolean>;
  /** Runs `fn` with no data-plane change in flight (the data-plane lane). */
  exclusive: <T>(fn: () => T) => Promise<T>;
  /** Full reconcile of the data plane from the store. */
  reconcile: () => Promise<void>;
  /** Drops the services' in-memory copies of stored rows (after the store was replaced). */
  afterRestore: () => void;
  /** Reader bounds (tests lower them). */
  limits?: ReaderLimits;
}

/** Who asked for an archive (for the logs). */
export type BackupOrigin = 'api' | 'hourly' | 'daily';

/** Creates, lists and restores archives; one create or restore at a time. */
export class BackupService {
  readonly folder: BackupFolder;
  private lane: Promise<unknown> = Promise.resolve();
  private active = 0;

  constructor(private readonly deps: BackupServiceDeps) {
    this.folder = new BackupFolder(join(deps.dataDir, 'backups'));
  }

  /** Whether a create or restore is running or queued. */
  get busy(): boolean {
    return this.active > 0;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    this.active++;
    const run = this.lane.then(fn, fn);
    this.lane = run.catch(() => undefined).finally(() => this.active--);
    return run;
  }

  list(): Backup[] {
    return this.folder.list();
  }

  /** Path of archive `name` for download; `There is no backup with this name` for an invalid or unknown name. */
  pathOf(name: string): string {
    const path = this.folder.pathOf(name);
    if (!path) throw new ApiError(E.BACKUP_NO_SUCH);
    return path;
  }

  /**
   * POST /backups and scheduled runs: writes the archive, removes archives beyond `number_backups`, then uploads
   * when `backup_to_ftp` (and prunes the server). A failed upload answers `FTP upload error: <reason>`; the local
   * archive stays.
   */
  create(statistics: boolean, origin: BackupOrigin = 'api'): Promise<Backup> {
    return this.exclusive(async () => {
      const now = this.deps.clock();
      let name = '';
      try {
        this.folder.ensure();
        name = this.folder.newName(now);
        await writeArchive(this.folder.dir, name, {
          db: this.deps.db, statistics, dataplane: this.deps.dataplaneFiles(), seal: (p) => this.deps.box.seal(p),
          extra: this.wrappedKey(),
          panelVersion: this.deps.panelVersion, createdAt: now,
        });
        this.folder.stamp(name, now);
      } catch (err) {
        this.deps.logger?.error({ err, origin }, 'backup creation failed');
        throw new ApiError(E.BACKUP_CREATION, undefined, (err as Error).message);
      }
      const config = this.deps.config.get();
      const removed = this.folder.prune(config.number_backups);
      this.deps.logger?.info({ backup: name, origin, statistics, removed }, 'backup created');
      if (config.backup_to_ftp) await this.upload(join(this.folder.dir, name), config.number_backups, origin);
      return this.folder.describe(name);
    });
  }

  private async upload(path: string, keep: number, origin: BackupOrigin): Promise<void> {
    const target = this.deps.config.ftpTarget();
    try {
      await this.deps.ftp.upload(target, path);
      const removed = await this.deps.ftp.prune(target, keep);
      this.deps.logger?.info({ origin, server: target.server, removed }, 'backup uploaded');
    } catch (err) {
      const reason = (err as Error).message.replaceAll(target.password || '\u0000', '***');
      this.deps.logger?.error({ origin, server: target.server, reason }, `${E.BACKUP_FTP_UPLOAD} ${reason}`);
      throw new ApiError(E.BACKUP_FTP_UPLOAD, undefined, reason);
    }
  }

  /**
   * PUT /backups/restore: refused unless the panel is OK; the archive is verified and extracted into a work folder
   * first (names, count, list, sizes, SHA-256, the database and its data key) — the live store is untouched until
   * then. Then the store's tables are replaced in one transaction and a full reconcile makes the data plane match.
   */
  restore(name: string): Promise<void> {
    return this.exclusive(async () => {
      if (!(await this.deps.statusOk())) throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
      const path = this.pathOf(name);
      const work = join(this.folder.dir, `.restore-${randomBytes(6).toString('hex')}`);
      try {
        const archive = await extractArchive(path, work, this.deps.limits ?? DEFAULT_LIMITS);
        if (!archive.list.files.some((f) => f.name === DATABASE_NAME)) {
          throw new ApiError(E.BACKUP_READER, undefined, `no ${DATABASE_NAME} in the archive`);
        }
        if (!this.sealedWithOurKey(archive.list.key_check)) {
          throw new ApiError(E.BACKUP_READER, undefined,
            'the archive is sealed with another data key (copy secret.key of the panel that made it into the data directory)');
        }
        const dbPath = extractedPath(archive, DATABASE_NAME);
        prepareSnapshot(dbPath, archive.list.schema_versions);
        await this.deps.exclusive(() => applySnapshot(this.deps.db, dbPath));
        this.deps.afterRestore();
        this.deps.config.reloaded();
        this.deps.logger?.info({ backup: name }, 'backup restored; reconciling the data plane');
      } catch (err) {
        if (!isApiError(err)) this.deps.logger?.error({ err, backup: name }, 'restore failed');
        throw isApiError(err) ? err : new ApiError(E.BACKUP_READER, undefined, (err as Error).message);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      try {
        await this.deps.reconcile();
      } catch (err) {
        this.deps.logger?.error({ err, backup: name }, 'reconcile after restore failed');
        throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
      }
    });
  }

  /** `backup-key.json` (the data key wrapped by the operator's passphrase) when one was set. */
  private wrappedKey(): Map<string, string> {
    const text = readWrappedKeyFile(this.deps.dataDir);
    return new Map(text === null ? [] : [[BACKUP_KEY_FILE, text]]);
  }

  private sealedWithOurKey(keyCheck: string): boolean {
    try {
      return this.deps.box.open(keyCheck) === KEY_CHECK_PLAIN;
    } catch {
      return false;
    }
  }
}
