// Backup round trip: fill, back up, change and delete, restore → every API answer as before; statistics flag;
// restore onto a fresh data directory (new machine) with the exported data key; no private key in the archive.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { fillStore, makeBackupPanel, snapshotAnswers } from './backup-fixture.ts';
import { readZip } from './raw-zip.ts';

test('round trip: servers, accounts, forwards, rules, settings and statistics come back after changes and deletes', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    await p.ok('PUT', '/backups/config', {
      backup_to_ftp: '0', every_day: '1', every_day_hour: '4', every_day_minute: '30', every_day_statistics: '1',
      every_hour: '0', every_hour_minute: '0', every_hour_statistics: '0', ftp_server: 'ftp.example', ftp_server_port: '21',
      ftp_user: 'u', ftp_password: 'pw', ftp_path: '/b', number_backups: '5',
    });
    const before = await snapshotAnswers(p);
    const stats = before['/account/alice/traffic_statistics/2026/3'] as any;
    assert.ok(stats.msg.some((d: any) => Number(d.traffic_download) > 0), 'the store holds statistics');
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    const dataplaneBefore = p.dataplane;

    // change and delete things
    await p.ok('DELETE', '/port_forward/8080/tcp');
    await p.ok('DELETE', '/account/carol');
    await p.ok('PUT', '/account/bob', { status: 'enable' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.9', name: 'dave' });
    await p.ok('DELETE', '/firewall/rules/filter/ssh');
    await p.ok('PUT', '/system/config', { traffic_statistics_history: '3' });
    await p.ok('PUT', '/backups/config', { ...Object.fromEntries(Object.entries(await p.ok('GET', '/backups/config')).map(([k, v]) => [k, String(v === true ? 1 : v === false ? 0 : v)])), number_backups: '9' });
    assert.notDeepEqual(await snapshotAnswers(p), before);

    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.deepEqual(await snapshotAnswers(p), before);
    assert.equal((await p.call('GET', '/account/dave')).body.error, E.ACCOUNT_NOT_FOUND);
    // the data plane follows the store: dave gone, bob disabled again, carol back on wg1
    const peers = async (iface: string) => (await p.driver.inspect(iface))!.peers.map((x) => x.publicKey).sort();
    const answers = before as any;
    assert.deepEqual(await peers('wg0'), [answers['/account/alice'].msg.public_key]);
    assert.deepEqual(await peers('wg1'), [answers['/account/carol'].msg.public_key]);
    assert.equal(p.dataplane, dataplaneBefore);
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
    // the archive itself is still listed, and a new account can be made (sequences restored, no clash)
    assert.ok((await p.ok('GET', '/backups')).backups.some((b: any) => b.backup_name === made.backup_name));
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.20', name: 'erin' });
  } finally {
    await p.close();
  }
});

test('statistics=0 leaves the statistics out; the archive holds no private key in clear', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const answers = await snapshotAnswers(p) as any;
    const made = await p.ok('POST', '/backups', { statistics: '0' });
    const entries = await readZip(join(p.dir, 'backups', made.backup_name));
    const all = Buffer.concat(entries.map((e) => e.data));
    for (const secret of [answers['/wireguard/srv'].msg.private_key, answers['/account/alice'].msg.private_key]) {
      assert.equal(all.includes(Buffer.from(secret)), false, 'a private key in clear');
    }
    const list = JSON.parse(entries.find((e) => e.name === 'filelist.json')!.data.toString());
    assert.equal(list.statistics, false);
    assert.match(entries.find((e) => e.name === 'dataplane/wg0.conf')!.data.toString(), /PublicKey = /);
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    const days = await p.ok('GET', '/account/alice/traffic_statistics/2026/3');
    assert.ok(days.every((d: any) => Number(d.traffic_download) === 0 && Number(d.traffic_upload) === 0), 'statistics were left out');
    assert.deepEqual(await p.ok('GET', '/account'), answers['/account'].msg);
  } finally {
    await p.close();
  }
});

test('restore onto a new machine: a fresh data directory with the old secret.key restores everything', async () => {
  const old = await makeBackupPanel();
  const fresh = mkdtempSync(join(tmpdir(), 'vpnhost-new-machine-'));
  const keyless = mkdtempSync(join(tmpdir(), 'vpnhost-keyless-'));
  try {
    await fillStore(old);
    const before = await snapshotAnswers(old);
    const made = await old.ok('POST', '/backups', { statistics: '1' });
    const archive = join(old.dir, 'backups', made.backup_name);

    // without the old data key the archive's secrets cannot be opened: refused, nothing changed
    mkdirSync(join(keyless, 'backups'));
    copyFileSync(archive, join(keyless, 'backups', made.backup_name));
    const stranger = await makeBackupPanel({ dir: keyless });
    try {
      const refused = await stranger.call('PUT', '/backups/restore', { backup_name: made.backup_name });
      assert.ok(refused.body.error.startsWith(`${E.BACKUP_READER} `), refused.body.error);
      assert.deepEqual(await stranger.ok('GET', '/wireguard'), {});
    } finally {
      await stranger.close();
    }

    // the documented way: secret.key and the archive copied into the new data directory before the panel starts
    mkdirSync(join(fresh, 'backups'));
    copyFileSync(join(old.dir, 'secret.key'), join(fresh, 'secret.key'));
    copyFileSync(archive, join(fresh, 'backups', made.backup_name));
    const driver = new SimulatedDriver();
    const p = await makeBackupPanel({ dir: fresh, driver });
    try {
      p.clock.set(old.clock.now()); // the statistics listings run up to today
      assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
      const after = await snapshotAnswers(p);
      assert.deepEqual(after, before);
      assert.equal((await driver.inspect('wg0'))!.peers.length, 1);
      assert.equal((await driver.inspect('wg1'))!.peers.length, 1);
      assert.equal(readFileSync(join(fresh, 'secret.key')).length, 32);
    } finally {
      await p.close();
    }
  } finally {
    await old.close();
    rmSync(fresh, { recursive: true, force: true });
    rmSync(keyless, { recursive: true, force: true });
  }
});

test('restore is refused with CONTROLPANEL status not OK while the data plane is unhealthy', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', {});
    const before = p.db.serialize();
    p.driver.health = async () => ({ ok: false, detail: 'down for the test' });
    const answer = await p.call('PUT', '/backups/restore', { backup_name: made.backup_name });
    assert.equal(answer.body.error, E.CONTROLPANEL_STATUS_NOT_OK);
    assert.ok(before.equals(p.db.serialize()));
  } finally {
    await p.close();
  }
});

test('an archive made while accounts are being created is a consistent snapshot (counter equals rows after restore)', async () => {
  const p = await makeBackupPanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', address: '10.0.1.1/24', external_ip: '192.0.2.10' });
    const creations = Array.from({ length: 30 }, (_, i) => p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: `10.0.1.${i + 2}`, name: `acc${i}` }));
    const made = p.ok('POST', '/backups', {});
    const [backup] = await Promise.all([made, ...creations]);
    await p.ok('DELETE', '/account/acc0');
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: backup.backup_name }), 'success');
    const accounts = Object.keys(await p.ok('GET', '/account'));
    assert.equal((await p.ok('GET', '/system/status')).count_accounts, accounts.length);
    const peers = (await p.driver.inspect('wg0'))!.peers.length;
    assert.equal(peers, accounts.length, 'the data plane holds exactly the restored accounts');
  } finally {
    await p.close();
  }
});
