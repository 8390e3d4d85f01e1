// Backup schedule: croner patterns from the config, each schedule's statistics flag, overlap skipped and logged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cron } from 'croner';
import type { BackupConfig } from '../../../panel/schemas/backups.ts';
import { BackupScheduler, schedulePatterns } from '../../../panel/services/backups/backup-scheduler.ts';

const base: BackupConfig = {
  backup_to_ftp: false, every_day: false, every_day_hour: 3, every_day_minute: 0, every_day_statistics: false,
  every_hour: false, every_hour_minute: 0, every_hour_statistics: false, ftp_server: '', ftp_server_port: 21,
  ftp_user: '', ftp_password: '', ftp_path: '', number_backups: 7,
};

test('patterns: hourly at its minute, daily at hour:minute, each with its flag; none when both are off', () => {
  assert.deepEqual(schedulePatterns(base), []);
  const both = schedulePatterns({ ...base, every_hour: true, every_hour_minute: 59, every_day: true, every_day_hour: 23, every_day_minute: 5, every_day_statistics: true });
  assert.deepEqual(both, [
    { kind: 'hourly', pattern: '59 * * * *', statistics: false },
    { kind: 'daily', pattern: '5 23 * * *', statistics: true },
  ]);
  const daily = new Cron(both[1].pattern, { paused: true, timezone: 'UTC' });
  assert.equal(daily.nextRun(new Date('2026-03-15T23:04:00Z'))!.toISOString(), '2026-03-15T23:05:00.000Z');
  assert.equal(daily.nextRun(new Date('2026-03-15T23:05:00Z'))!.toISOString(), '2026-03-16T23:05:00.000Z');
  const hourly = new Cron(both[0].pattern, { paused: true, timezone: 'UTC' });
  assert.equal(hourly.nextRun(new Date('2026-03-15T10:59:30Z'))!.toISOString(), '2026-03-15T11:59:00.000Z');
});

test('trigger: runs with the schedule flag; a run while one is running or the service is busy is skipped and logged', async () => {
  const runs: Array<[boolean, string]> = [];
  let release: () => void = () => undefined;
  const warnings: unknown[] = [];
  let busy = false;
  const sched = new BackupScheduler({
    config: () => ({ ...base, every_hour: true, every_day: true, every_day_statistics: true }),
    run: (statistics, kind) => {
      runs.push([statistics, kind]);
      return new Promise<void>((r) => { release = r; });
    },
    busy: () => busy,
    logger: { warn: (o: unknown) => warnings.push(o), error: () => undefined, info: () => undefined } as never,
    timeZone: 'UTC',
  });
  const first = sched.trigger('daily');
  assert.equal(await sched.trigger('hourly'), 'skipped');
  release();
  assert.equal(await first, 'done');
  busy = true;
  assert.equal(await sched.trigger('hourly'), 'skipped', 'an API backup or restore is running');
  busy = false;
  const second = sched.trigger('hourly');
  release();
  assert.equal(await second, 'done');
  assert.deepEqual(runs, [[true, 'daily'], [false, 'hourly']]);
  assert.equal(warnings.length, 2);
  sched.start();
  assert.equal(sched.nextRuns().length, 2);
  await sched.stop();
  assert.deepEqual(sched.nextRuns(), []);
});

test('trigger reports a failed run without throwing', async () => {
  const errors: unknown[] = [];
  const sched = new BackupScheduler({
    config: () => base, run: async () => { throw new Error('FTP upload error: 530'); }, busy: () => false,
    logger: { warn: () => undefined, error: (o: unknown) => errors.push(o), info: () => undefined } as never,
  });
  assert.equal(await sched.trigger('hourly'), 'failed');
  assert.equal(errors.length, 1);
});
