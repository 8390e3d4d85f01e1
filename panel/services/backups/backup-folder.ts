// The backup folder: archive names (validated, no path can leave the folder), listing, new names and retention.
import { existsSync, mkdirSync, readdirSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Backup } from '../../schemas/backups.ts';
import { isoWithOffset } from '../iso-time.ts';

/** A name `GET /backups/<name>` and restore accept: one path segment, `.zip`, no `..`, no separators. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}\.zip$/;
/** Archives this panel makes (the only ones retention removes). */
const OWN_NAME = /^backup_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}-\d{3}(?:_\d+)?\.zip$/;

/** Whether `name` is an acceptable archive name (no separators, no `..`, ends in .zip). */
export function isValidBackupName(name: string): boolean {
  return NAME.test(name) && !name.includes('..');
}

/** `2026-11-23T13:00:00.123+01:00`: ISO 8601 with milliseconds and the host's offset. */
export function isoWithMillis(date: Date): string {
  return isoWithOffset(date, { millis: true });
}

/** The archives of one directory (`<dataDir>/backups`). */
export class BackupFolder {
  constructor(readonly dir: string) {}

  ensure(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The path of an existing archive `name`, or null (invalid name or no such file). */
  pathOf(name: string): string | null {
    if (!isValidBackupName(name)) return null;
    const path = join(this.dir, name);
    try {
      return statSync(path).isFile() ? path : null;
    } catch {
      return null;
    }
  }

  /** A fresh name for an archive made at `at` (UTC): `backup_YYYY-MM-DD_HH-MM-SS-mmm.zip`, suffixed when taken. */
  newName(at: Date): string {
    const stamp = at.toISOString().slice(0, 23).replace('T', '_').replace(/:/g, '-').replace('.', '-');
    let name = `backup_${stamp}.zip`;
    for (let n = 2; existsSync(join(this.dir, name)) || existsSync(join(this.dir, `${name}.part`)); n++) name = `backup_${stamp}_${n}.zip`;
    return name;
  }

  /** Marks `name` as made at `at` (its modification time is its creation_date). */
  stamp(name: string, at: Date): void {
    utimesSync(join(this.dir, name), at, at);
  }

  describe(name: string): Backup {
    const st = statSync(join(this.dir, name));
    return { backup_name: name, creation_date: isoWithMillis(st.mtime), size: st.size };
  }

  /** Every archive, newest first (by modification time, then name). */
  list(): Backup[] {
    if (!existsSync(this.dir) || !statSync(this.dir).isDirectory()) return [];
    const out: Array<{ backup: Backup; at: number }> = [];
    for (const name of readdirSync(this.dir)) {
      if (!isValidBackupName(name)) continue;
      try {
        const st = statSync(join(this.dir, name));
        if (st.isFile()) out.push({ backup: { backup_name: name, creation_date: isoWithMillis(st.mtime), size: st.size }, at: st.mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
    return out.sort((a, b) => b.at - a.at || b.backup.backup_name.localeCompare(a.backup.backup_name)).map((e) => e.backup);
  }

  /** Keeps the `keep` newest archives this panel made (`backup_<time>.zip`); returns the names removed. */
  prune(keep: number): string[] {
    const own = this.list().filter((b) => OWN_NAME.test(b.backup_name));
    const removed: string[] = [];
    for (const b of own.slice(keep)) {
      unlinkSync(join(this.dir, b.backup_name));
      removed.push(b.backup_name);
    }
    return removed;
  }
}

/** Names of this panel's archives among `names`, oldest first (their names sort by time). */
export function ownArchivesOldestFirst(names: string[]): string[] {
  return names.filter((n) => OWN_NAME.test(n)).sort();
}
