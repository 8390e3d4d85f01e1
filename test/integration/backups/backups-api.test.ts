// /backups endpoints: config checks and texts (every range edge), list shape, download without envelope, names,
// POST's statistics flag, retention, FTP upload and its failure (local archive kept), scheduled runs and overlap.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { E, OWN } from '../../../panel/http/errors.ts';
import { FTP_PASSWORD_MASK } from '../../../panel/schemas/backups.ts';
import { fillStore, makeBackupPanel } from './backup-fixture.ts';

const CONFIG = {
  backup_to_ftp: '0', every_day: '0', every_day_hour: '3', every_day_minute: '0', every_day_statistics: '0',
  every_hour: '0', every_hour_minute: '0', every_hour_statistics: '0', ftp_server: '', ftp_server_port: '21',
  ftp_user: '', ftp_password: '', ftp_path: '', number_backups: '7',
};

test('GET/PUT /backups/config: defaults, every check and text in order, range edges, password sealed and masked', async () => {
  const p = await makeBackupPanel();
  try {
    assert.deepEqual(await p.ok('GET', '/backups/config'), {
      backup_to_ftp: false, every_day: false, every_day_hour: 3, every_day_minute: 0, every_day_statistics: false,
      every_hour: false, every_hour_minute: 0, every_hour_statistics: false, ftp_server: '', ftp_server_port: 21,
      ftp_user: '', ftp_password: '', ftp_path: '', number_backups: 7,
    });
    const refuse = async (change: Record<string, string>, text: string, drop: string[] = []) => {
      const form: Record<string, string> = { ...CONFIG, ...change };
      for (const k of drop) delete form[k];
      const a = await p.call('PUT', '/backups/config', form);
      assert.equal(a.body.error, text, JSON.stringify(change) + drop.join());
      assert.equal(a.status, 400);
    };
    for (const v of ['-1', '60', 'x', '1.5', '']) await refuse({ every_hour_minute: v }, E.BACKUP_CFG_HOUR_MINUTE);
    await refuse({}, E.BACKUP_CFG_HOUR_MINUTE, ['every_hour_minute']);
    for (const v of ['-1', '24', 'x']) await refuse({ every_day_hour: v }, E.BACKUP_CFG_DAY_HOUR);
    for (const v of ['-1', '60', 'x']) await refuse({ every_day_minute: v }, E.BACKUP_CFG_DAY_MINUTE);
    for (const v of ['0', '-3', 'x', '']) await refuse({ number_backups: v }, E.BACKUP_CFG_NUMBER);
    // first failing check wins, in the spec's order
    await refuse({ every_hour_minute: '60', every_day_hour: '24', number_backups: '0' }, E.BACKUP_CFG_HOUR_MINUTE);
    await refuse({ every_day_hour: '24', every_day_minute: '60' }, E.BACKUP_CFG_DAY_HOUR);
    await refuse({ backup_to_ftp: '1' }, E.BACKUP_CFG_FTP_SERVER);
    await refuse({ backup_to_ftp: '1', ftp_server: 'ftp.example' }, E.BACKUP_CFG_FTP_USER);
    await refuse({ backup_to_ftp: '1', ftp_server: 'ftp.example', ftp_user: 'u' }, E.BACKUP_CFG_FTP_PASSWORD);
    await refuse({ every_day: 'yes' }, 'Wrong every_day format (1 or 0)');
    await refuse({ ftp_server_port: '0' }, OWN.BACKUP_WRONG_FTP_PORT);
    await refuse({ ftp_server_port: '65536' }, OWN.BACKUP_WRONG_FTP_PORT);
    await refuse({ ftp_user: 'a\nb' }, OWN.BACKUP_WRONG_FTP_TEXT);
    assert.equal((await p.ok('GET', '/backups/config')).number_backups, 7, 'refused changes changed nothing');

    const edges = { every_hour: '1', every_hour_minute: '59', every_day: '1', every_day_hour: '23', every_day_minute: '59', number_backups: '1' };
    const saved = await p.ok('PUT', '/backups/config', { ...CONFIG, ...edges, backup_to_ftp: '1', ftp_server: 'ftp.example', ftp_user: 'u', ftp_password: 's3cret-pw', ftp_path: '/vpn', ftp_server_port: '65535' });
    assert.equal(saved.ftp_password, FTP_PASSWORD_MASK);
    assert.equal(saved.every_day_hour, 23);
    assert.equal(saved.every_hour_minute, 59);
    assert.equal(saved.backup_to_ftp, true);
    const zero = await p.ok('PUT', '/backups/config', { ...CONFIG, every_hour_minute: '0', every_day_hour: '0', every_day_minute: '0', backup_to_ftp: '1', ftp_server: 'ftp.example', ftp_user: 'u', ftp_password: FTP_PASSWORD_MASK, ftp_server_port: '1' });
    assert.equal(zero.ftp_password, FTP_PASSWORD_MASK, 'the mask keeps the stored password');
    assert.equal(p.app.services.backupConfig.ftpTarget().password, 's3cret-pw');
    const stored = p.db.prepare("SELECT value FROM settings WHERE key = 'backup_config'").pluck().get() as string;
    assert.equal(stored.includes('s3cret-pw'), false, 'the FTP password is sealed at rest');
    const cleared = await p.ok('PUT', '/backups/config', CONFIG);
    assert.equal(cleared.ftp_password, '');
  } finally {
    await p.close();
  }
});

test('POST /backups, GET /backups and GET /backups/<name>: shapes, zip bytes without envelope, names confined', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    assert.equal((await p.call('POST', '/backups', { statistics: '2' })).body.error, 'Wrong statistics format (1 or 0)');
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    assert.match(made.backup_name, /^backup_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}-\d{3}\.zip$/);
    assert.match(made.creation_date, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
    assert.equal(new Date(made.creation_date).getTime(), p.clock.now().getTime());
    const file = readFileSync(join(p.dir, 'backups', made.backup_name));
    assert.equal(made.size, file.length);
    p.clock.advance(1500);
    const second = await p.ok('POST', '/backups');
    assert.deepEqual((await p.ok('GET', '/backups')).backups, [second, made], 'newest first');

    const res = await p.app.inject({ method: 'GET', url: `/api/v1/backups/${made.backup_name}`, headers: { cookie: p.cookie } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/zip');
    assert.ok(res.rawPayload.equals(file), 'the zip itself, no envelope');
    for (const bad of ['..%2Fpanel.db', '..%2F..%2Fetc%2Fpasswd', 'nope.zip', '%2Fetc%2Fpasswd', 'secret.key', 'backups', 'panel.db']) {
      const r = await p.app.inject({ method: 'GET', url: `/api/v1/backups/${bad}`, headers: { cookie: p.cookie } });
      assert.equal(r.json().error, E.BACKUP_NO_SUCH, bad);
    }
    const dots = await p.app.inject({ method: 'GET', url: '/api/v1/backups/..', headers: { cookie: p.cookie } });
    assert.equal(dots.json().status, 'error', '`..` never reaches a file');
    const anon = await p.app.inject({ method: 'GET', url: `/api/v1/backups/${made.backup_name}` });
    assert.equal(anon.json().error, E.NOT_AUTHORIZED);
  } finally {
    await p.close();
  }
});

test('retention keeps number_backups locally and on FTP; an FTP failure answers FTP upload error: and keeps the archive', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    await p.ok('PUT', '/backups/config', { ...CONFIG, number_backups: '2', backup_to_ftp: '1', ftp_server: 'ftp.example', ftp_user: 'u', ftp_password: 'pw', ftp_path: '/b' });
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      p.clock.advance(60_000);
      names.push((await p.ok('POST', '/backups')).backup_name);
    }
    assert.deepEqual((await p.ok('GET', '/backups')).backups.map((b: any) => b.backup_name), [names[3], names[2]]);
    assert.deepEqual([...p.ftp.files.keys()].sort(), [names[2], names[3]]);
    assert.deepEqual(p.ftp.targets.at(-1), { server: 'ftp.example', port: 21, user: 'u', password: 'pw', path: '/b' });

    p.ftp.fail = '530 Login incorrect.';
    p.clock.advance(60_000);
    const failed = await p.call('POST', '/backups');
    assert.equal(failed.body.error, `${E.BACKUP_FTP_UPLOAD} 530 Login incorrect.`);
    const listed = (await p.ok('GET', '/backups')).backups.map((b: any) => b.backup_name);
    assert.equal(listed.length, 2);
    assert.ok(existsSync(join(p.dir, 'backups', listed[0])), 'the local archive of the failed upload is kept');
    assert.ok(!p.ftp.files.has(listed[0]));
  } finally {
    await p.close();
  }
});

test('scheduled runs: croner patterns, each schedule with its statistics flag, overlapping run skipped', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const sched = p.app.services.backupScheduler;
    await p.ok('PUT', '/backups/config', { ...CONFIG, every_hour: '1', every_hour_minute: '15', every_day: '1', every_day_hour: '2', every_day_minute: '30', every_day_statistics: '1' });
    sched.start();
    const next = sched.nextRuns();
    assert.equal(next.length, 2);
    assert.equal(next[0]!.getMinutes(), 15);
    assert.equal(next[1]!.getHours() * 60 + next[1]!.getMinutes(), 2 * 60 + 30);
    assert.equal(await sched.trigger('daily'), 'done');
    const daily = p.app.services.backups.list()[0];
    p.clock.advance(1000);
    const first = sched.trigger('hourly');
    assert.equal(await sched.trigger('daily'), 'skipped', 'a run while one is running is skipped');
    assert.equal(await first, 'done');
    const [hourly] = p.app.services.backups.list();
    assert.notEqual(hourly.backup_name, daily.backup_name);
    const statisticsOf = async (name: string) => {
      const { readZip } = await import('./raw-zip.ts');
      const entries = await readZip(join(p.dir, 'backups', name));
      return JSON.parse(entries.find((e) => e.name === 'filelist.json')!.data.toString()).statistics;
    };
    assert.equal(await statisticsOf(daily.backup_name), true);
    assert.equal(await statisticsOf(hourly.backup_name), false);
    await p.ok('PUT', '/backups/config', { ...CONFIG });
    assert.deepEqual(sched.nextRuns(), [], 'a config change reschedules');
  } finally {
    await p.close();
  }
});

test('POST /backups answers Error backup creation: when the archive cannot be written', async () => {
  const p = await makeBackupPanel();
  try {
    writeFileSync(join(p.dir, 'backups'), 'a file where the folder should be');
    const answer = await p.call('POST', '/backups');
    assert.equal(answer.body.status, 'error');
    assert.ok(answer.body.error.startsWith(`${E.BACKUP_CREATION} `), answer.body.error);
    assert.equal(answer.status, 500);
    assert.deepEqual(await p.ok('GET', '/backups'), { backups: [] });
  } finally {
    await p.close();
  }
});
