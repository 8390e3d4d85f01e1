// Backups: create (snapshot + zip, retention, FTP upload), list, locate for download, and verified restore.
import { type Clock } from '../../../shared/clock.ts';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ApiError, E, isApiError } from '../../http/errors.ts';
import type { Backup } from '../../schemas/backups.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Db } from '../../store/db.ts';
import { DATABASE_NAME, DEFAULT_LIMITS, type ReaderLimits } from './archive-format.ts';
import { extractArchive, extractedPath } from './archive-reader.ts';
import { authenticateFileList } from './archive-signature.ts';
import { writeArchive } from './archive-writer.ts';
import type { BackupConfigService } from './backup-config.ts';
import { BackupFolder } from './backup-folder.ts';
import { BACKUP_KEY_FILE, readWrappedKeyFile } from './backup-key.ts';
import type { FtpUploader } from './ftp-upload.ts';
import { checkSnapshotRows, type SnapshotCheckContext } from './snapshot-checks.ts';
import { applySnapshot, prepareSnapshot } from './store-restore.ts';

/** What the backup service is built from. */
export interface BackupServiceDeps {
  db: Db;
  /** Archives live in `<dataDir>/backups`. */
  dataDir: string;
  box: SecretBox;
  clock: Clock;
  logger?: Logger;
  config: BackupConfigService;
  ftp: FtpUploader;
  panelVersion: string;
  /** The data-plane files of an archive (`<interface>.conf` → text), rendered from the store. */
  dataplaneFiles: () => Map<string, string>;
  /**
   * Whether a restore may start: the status is `OK`, or its only problem is a failed reconcile (restoring a good
   * archive is then a way back); not while a reconcile runs or the data plane is unhealthy.
   */
  restorable: () => Promise<boolean>;
  /** Runs `fn` with no data-plane change in flight (the data-plane lane). */
  exclusive: <T>(fn: () => T) => Promise<T>;
  /** Full reconcile of the data plane from the store (waits for one already running). */
  reconcile: () => Promise<void>;
  /** A traffic sample (in the lane), so the bytes counted so far belong to the store a failed restore puts back. */
  sample: () => Promise<void>;
  /** What the archive's rows are checked against (host networks, license, API port), read fresh per restore. */
  checkContext: () => Promise<SnapshotCheckContext>;
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
      const now = this.deps.clock.now();
      let name = '';
      try {
        this.folder.ensure();
        name = this.folder.newName(now);
        await writeArchive(this.folder.dir, name, {
          db: this.deps.db, statistics, dataplane: this.deps.dataplaneFiles(), key: this.deps.box,
          extra: this.wrappedKey(),
          panelVersion: this.deps.panelVersion, createdAt: now,
        });
        this.folder.stamp(name, now);
      } catch (err) {
        this.deps.logger?.error({ err, origin }, 'backup creation failed');
        throw new ApiError(E.BACKUP_CREATION, (err as Error).message);
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
      throw new ApiError(E.BACKUP_FTP_UPLOAD, reason);
    }
  }

  /**
   * PUT /backups/restore, all or nothing. Refused with `CONTROLPANEL status not OK` unless the data plane is healthy
   * and no reconcile runs (a failed earlier reconcile does not stop it: restoring a good archive is a way back).
   * Before the live store is touched, the archive is verified and extracted into a work folder (names, count, list,
   * sizes, SHA-256; the key check and the manifest's signature first), its database checked and migrated, and every
   * row it brings checked with the API's own checks ({@link checkSnapshotRows}); the first failure answers its spec
   * text and changes nothing. Then, in the data-plane lane, the live store is copied aside and its tables replaced
   * in one transaction, and a full reconcile makes the data plane match. When the data plane refuses the restored
   * store anyway, the copy is put back and reconciled: the answer is `Error backup reader: the data plane refused
   * the archive (...)` and the panel is as before (`CONTROLPANEL status not OK` only when that reconcile fails too;
   * `PUT /system/reload` retries it).
   */
  restore(name: string): Promise<void> {
    return this.exclusive(async () => {
      if (!(await this.deps.restorable())) throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
      const path = this.pathOf(name);
      const work = join(this.folder.dir, `.restore-${randomBytes(6).toString('hex')}`);
      try {
        const dbPath = await this.checkedSnapshot(path, work, name);
        const previous = join(work, 'previous.db');
        await this.deps.sample().catch((err: unknown) => this.deps.logger?.warn({ err }, 'traffic sample before restore failed'));
        await this.swap(name, async () => {
          await this.deps.db.backup(previous);
          applySnapshot(this.deps.db, dbPath);
        });
        this.deps.logger?.info({ backup: name }, 'backup restored; reconciling the data plane');
        const refusal = await this.deps.reconcile().then(() => null, (err: unknown) => err);
        if (refusal) await this.rollBack(name, previous, refusal);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  }

  /** Verifies, extracts, migrates and checks the archive's store in `work`; returns the snapshot's path. */
  private async checkedSnapshot(path: string, work: string, name: string): Promise<string> {
    try {
      const archive = await extractArchive(path, work, this.deps.limits ?? DEFAULT_LIMITS, (list) => {
        authenticateFileList(list, this.deps.box);
        if (!list.files.some((f) => f.name === DATABASE_NAME)) throw new ApiError(E.BACKUP_READER, `no ${DATABASE_NAME} in the archive`);
      });
      const dbPath = extractedPath(archive, DATABASE_NAME);
      prepareSnapshot(dbPath, archive.list.schema_versions);
      await checkSnapshotRows(dbPath, await this.deps.checkContext());
      return dbPath;
    } catch (err) {
      if (!isApiError(err)) this.deps.logger?.error({ err, backup: name }, 'restore failed');
      else this.deps.logger?.warn({ backup: name, refused: err.message }, 'backup archive refused; nothing changed');
      throw isApiError(err) ? err : new ApiError(E.BACKUP_READER, (err as Error).message);
    }
  }

  /** Replaces the live store inside the data-plane lane (`replace`), then lets the services re-read it. */
  private async swap(name: string, replace: () => Promise<void> | void): Promise<void> {
    try {
      await this.deps.exclusive(replace);
    } catch (err) {
      if (!isApiError(err)) this.deps.logger?.error({ err, backup: name }, 'store swap failed');
      throw isApiError(err) ? err : new ApiError(E.BACKUP_DELETE_OLD_CONFIG, (err as Error).message);
    } finally {
      this.deps.afterRestore();
      this.deps.config.reloaded();
    }
  }

  /** The data plane refused the restored store: the previous one goes back and is reconciled. Always throws. */
  private async rollBack(name: string, previous: string, refusal: unknown): Promise<never> {
    const reason = (refusal instanceof Error ? refusal.message : String(refusal)).slice(0, 300);
    this.deps.logger?.error({ err: refusal, backup: name }, 'the data plane refused the restored store; putting the previous store back');
    try {
      await this.swap(name, () => applySnapshot(this.deps.db, previous));
      await this.deps.reconcile();
    } catch (err) {
      this.deps.logger?.error({ err, backup: name }, 'reconcile of the previous store failed (PUT /system/reload retries it)');
      throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
    }
    this.deps.logger?.warn({ backup: name }, 'previous store back after a refused restore');
    throw new ApiError(E.BACKUP_READER, `the data plane refused the archive (${reason}); the previous configuration is back`);
  }

  /** `backup-key.json` (the data key wrapped by the operator's passphrase) when one was set. */
  private wrappedKey(): Map<string, string> {
    const text = readWrappedKeyFile(this.deps.dataDir);
    return new Map(text === null ? [] : [[BACKUP_KEY_FILE, text]]);
  }
}
