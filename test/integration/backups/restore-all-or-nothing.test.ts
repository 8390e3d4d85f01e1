// A restore is all or nothing: archives whose rows the API would refuse (bad key, foreign interface name, refused
// range, overlap, host network, over the license, another panel's secrets, lying counters, DNS injection) are refused
// before anything is replaced — store and simulated data plane byte-identical, the panel OK; a data-plane failure after
// the swap puts the previous store back; a wedged panel comes back by restoring a good archive or PUT /system/reload.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type Database from 'better-sqlite3';
import { DataplaneError } from '../../../panel/dataplane/wireguard/driver.ts';
import { FIREWALL_TEXTS } from '../../../panel/dataplane/firewall/firewall-texts.ts';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { editArchiveDb, fillStore, makeBackupPanel, snapshotAnswers, type BackupPanel } from './backup-fixture.ts';
import { readZip, writeZip, type RawEntry } from './raw-zip.ts';

/** Everything the simulated data plane holds: links with peers, the firewall dump, the shaping trees. */
async function dataplaneState(p: BackupPanel): Promise<string> {
  const names = (await p.dataplane.wireguard.listInterfaces()).sort();
  const links = [];
  for (const name of names) links.push(await p.dataplane.wireguard.inspect(name));
  const shaping = [];
  for (const name of names) shaping.push(await p.dataplane.shaper.show(name).catch((err: Error) => err.message));
  return JSON.stringify({ names, links, firewall: await p.dataplane.firewall.dump(), shaping });
}

/** An archive whose panel.db was changed by `edit`, listed and signed with the panel's own key (a genuine archive). */
const variant = (p: BackupPanel, good: RawEntry[], edit: (db: Database.Database) => void): Buffer =>
  writeZip(editArchiveDb(p.dir, good, edit, SecretBox.open(p.dir)));

/** Restores `bytes` as `name` and asserts the refusal `detail` with store, data plane and status unchanged. */
async function expectRefused(p: BackupPanel, name: string, bytes: Buffer, detail: RegExp): Promise<void> {
  writeFileSync(join(p.dir, 'backups', name), bytes);
  const store = p.db.serialize();
  const plane = await dataplaneState(p);
  const answer = await p.call('PUT', '/backups/restore', { backup_name: name });
  assert.equal(answer.body.status, 'error', name);
  assert.ok(answer.body.error.startsWith(`${E.BACKUP_READER} `), `${name}: ${answer.body.error}`);
  assert.match(answer.body.error, detail, name);
  assert.ok(store.equals(p.db.serialize()), `${name}: the live store changed`);
  assert.equal(await dataplaneState(p), plane, `${name}: the data plane changed`);
  assert.equal((await p.ok('GET', '/system/status')).status, 'OK', `${name}: the panel is not OK`);
}

/** `text` as a literal in a RegExp. */
const lit = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const sealedBy = (box: SecretBox) => (db: Database.Database, sql: string, value: string) => db.prepare(sql).run(box.seal(value));

test('archives with rows the API refuses are refused naming the first bad row; nothing changes', async () => {
  const p = await makeBackupPanel({ licenseAccounts: 3 });
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    const good = await readZip(join(p.dir, 'backups', made.backup_name));
    await p.ok('DELETE', '/account/carol'); // the live store differs from the archive
    const box = SecretBox.open(p.dir);
    const net = (db: Database.Database, server: string, address: string, first: number, last: number) =>
      db.prepare('UPDATE wireguard_servers SET address = ?, net_first = ?, net_last = ? WHERE name = ?').run(address, first, last, server);
    const ip = (text: string) => text.split('.').reduce((n, o) => n * 256 + Number(o), 0);

    await expectRefused(p, 'bad-key.zip', variant(p, good, (db) => db.prepare("UPDATE accounts SET public_key = 'bm90IGEga2V5' WHERE name = 'alice'").run()),
      new RegExp(`account 'alice': ${E.KEYS_INVALID}$`));
    await expectRefused(p, 'eth0.zip', variant(p, good, (db) => db.prepare("UPDATE wireguard_servers SET interface_name = 'eth0' WHERE name = 'two'").run()),
      new RegExp(`wireguard server 'two': ${lit(E.WRONG_INTERFACE_NAME)}$`));
    await expectRefused(p, 'link-local.zip', variant(p, good, (db) => net(db, 'two', '169.254.1.1/24', ip('169.254.1.0'), ip('169.254.1.255'))),
      new RegExp(`wireguard server 'two': ${lit(OWN.RESERVED_ADDRESS)}$`));
    await expectRefused(p, 'loopback.zip', variant(p, good, (db) => net(db, 'two', '127.0.0.1/8', ip('127.0.0.0'), ip('127.255.255.255'))),
      new RegExp(`wireguard server 'two': ${lit(OWN.RESERVED_ADDRESS)}$`));
    await expectRefused(p, 'overlap.zip', variant(p, good, (db) => net(db, 'two', '10.0.1.129/25', ip('10.0.1.128'), ip('10.0.1.255'))),
      new RegExp(`wireguard server 'two': ${E.IP_OR_SUBNET_IN_USE}$`));
    await expectRefused(p, 'host-lan.zip', variant(p, good, (db) => net(db, 'two', '203.0.113.129/25', ip('203.0.113.128'), ip('203.0.113.255'))),
      new RegExp(`wireguard server 'two': ${E.IP_OR_SUBNET_IN_USE}$`));
    await expectRefused(p, 'derived.zip', variant(p, good, (db) => db.prepare("UPDATE wireguard_servers SET net_last = net_last + 256 WHERE name = 'srv'").run()),
      /wireguard server 'srv': net_first\/net_last do not match its address/);
    await expectRefused(p, 'outside.zip', variant(p, good, (db) => db.prepare("UPDATE accounts SET ip = ? WHERE name = 'carol'").run(ip('10.0.1.77'))),
      new RegExp(`account 'carol': ${E.IP_NOT_IN_RANGE}$`));
    await expectRefused(p, 'over-license.zip', variant(p, good, (db) => {
      const keys = generateKeyPair();
      db.prepare(`INSERT INTO accounts (name, username, password, status, server_id, ip, b_download, b_upload, mangle, private_key, public_key)
        VALUES ('dave', 'dave', ?, 'enable', 1, ?, 0, 0, 99, ?, ?)`).run(box.seal('pw-dave-12345'), ip('10.0.1.9'), box.seal(keys.privateKey), keys.publicKey);
      db.prepare("UPDATE wireguard_counters SET value = 99 WHERE name = 'account_seq'").run();
    }), new RegExp(`account 'dave': ${E.ACCOUNT_LIMIT_EXCEEDED}$`));
    const stranger = SecretBox.fromKey(randomBytes(32));
    await expectRefused(p, 'foreign-account.zip', variant(p, good, (db) => sealedBy(stranger)(db, "UPDATE accounts SET password = ? WHERE name = 'bob'", 'pw')),
      /account 'bob': a secret sealed with another data key \(a row of another panel\)$/);
    await expectRefused(p, 'foreign-server.zip', variant(p, good, (db) => sealedBy(stranger)(db, "UPDATE wireguard_servers SET private_key = ? WHERE name = 'srv'", generateKeyPair().privateKey)),
      /wireguard server 'srv': a secret sealed with another data key/);
    await expectRefused(p, 'foreign-license.zip', variant(p, good, (db) => sealedBy(stranger)(db, 'UPDATE license SET key_sealed = ?', 'x.y.z')),
      /table license, column key_sealed: a secret sealed with another data key/);
    await expectRefused(p, 'counter.zip', variant(p, good, (db) => db.prepare("UPDATE wireguard_counters SET value = 0 WHERE name = 'accounts'").run()),
      /wireguard_counters: the account count is not the 3 accounts of the archive/);
    await expectRefused(p, 'mark.zip', variant(p, good, (db) => {
      db.prepare("UPDATE accounts SET mangle = 16777216 WHERE name = 'alice'").run();
      db.prepare("UPDATE wireguard_counters SET value = 16777216 WHERE name = 'account_seq'").run();
    }), new RegExp(`wireguard server 'srv': ${lit(FIREWALL_TEXTS.WRONG_MARK)}$`));
    await expectRefused(p, 'nat-interface.zip', variant(p, good, (db) => db.prepare("UPDATE wireguard_servers SET external_interface = 'eth0 -j ACCEPT' WHERE name = 'two'").run()),
      new RegExp(`wireguard server 'two': ${lit(FIREWALL_TEXTS.WRONG_EXTERNAL_INTERFACE)}$`));
    await expectRefused(p, 'dns.zip', variant(p, good, (db) => db.prepare("UPDATE dns_settings SET forwarders_1 = '1.1.1.1\ninclude: /etc/shadow'").run()),
      new RegExp(`dns settings: ${E.DNS_FORWARDER1}$`));
    await expectRefused(p, 'forward.zip', variant(p, good, (db) => db.prepare("UPDATE port_forwards SET dst_port = (SELECT listen_port FROM wireguard_servers WHERE name = 'srv') WHERE dst_port = 8080").run()),
      new RegExp(`port forward \\d+/tcp: ${E.PF_DST_IS_LISTEN_PORT}$`));

    // the genuine archive still restores, with carol back on the data plane
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.equal((await p.ok('GET', '/account/carol')).name, 'carol');
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
  } finally {
    await p.close();
  }
});

test('a data-plane failure after the store swap puts the previous store back and reconciles it: OK, answers as before', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const carol = (await p.ok('GET', '/account/carol')).public_key as string;
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    await p.ok('DELETE', '/account/carol');
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.9', name: 'dave' });
    const before = await snapshotAnswers(p);
    const dave = await p.ok('GET', '/account/dave');
    const plane = await dataplaneState(p);

    // the data plane refuses carol's peer (what the row checks cannot foresee: a tool failing)
    const applyPeers = p.driver.applyPeers.bind(p.driver);
    let refusals = 0;
    p.driver.applyPeers = async (name, changes) => {
      if (changes.upsert.some((peer) => peer.publicKey === carol)) {
        refusals++;
        throw new DataplaneError('wg: simulated failure for the test');
      }
      return applyPeers(name, changes);
    };
    const answer = await p.call('PUT', '/backups/restore', { backup_name: made.backup_name });
    assert.equal(refusals, 1);
    assert.ok(answer.body.error.startsWith(`${E.BACKUP_READER} the data plane refused the archive (`), answer.body.error);
    assert.match(answer.body.error, /the previous configuration is back$/);
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
    assert.deepEqual(await snapshotAnswers(p), before, 'every answer as before the restore');
    assert.deepEqual(await p.ok('GET', '/account/dave'), dave);
    assert.equal(await dataplaneState(p), plane, 'the data plane as before');

    // the rollback's reconcile fails too: CONTROLPANEL status not OK; PUT /system/reload brings it back
    const ensure = p.driver.ensureInterface.bind(p.driver);
    let broken = true;
    p.driver.ensureInterface = async (spec) => {
      if (broken) throw new DataplaneError('ip: simulated outage for the test');
      return ensure(spec);
    };
    const wedged = await p.call('PUT', '/backups/restore', { backup_name: made.backup_name });
    assert.equal(wedged.body.error, E.CONTROLPANEL_STATUS_NOT_OK);
    assert.match((await p.ok('GET', '/system/status')).status, /^Error: reconcile failed/);
    assert.deepEqual(await snapshotAnswers(p), before, 'the previous store is back even so');
    broken = false;
    assert.equal(await p.ok('PUT', '/system/reload'), 'success');
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
    assert.equal(await dataplaneState(p), plane);

    // with the failure gone, the archive restores
    p.driver.applyPeers = applyPeers;
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.equal((await p.ok('GET', '/account/carol')).public_key, carol);
  } finally {
    await p.close();
  }
});

test('a panel wedged by a bad row (left by an older release) comes back by restoring a good archive', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    const answers = await snapshotAnswers(p);
    // what an older release's restore could leave: a peer whose key the data plane refuses
    p.db.prepare("UPDATE accounts SET public_key = 'bm90IGEga2V5' WHERE name = 'alice'").run();
    assert.equal((await p.call('PUT', '/system/reload')).body.error, E.CONTROLPANEL_STATUS_NOT_OK);
    assert.match((await p.ok('GET', '/system/status')).status, /^Error: reconcile failed/);
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
    assert.deepEqual(await snapshotAnswers(p), answers);
  } finally {
    await p.close();
  }
});
