// Backups are authenticated: the manifest (names, sizes, SHA-256, the list's fields) carries an HMAC-SHA256 under a
// key derived from the data key. Edited and re-zipped archives are refused with the live store unchanged; archives
// of the previous release (unsigned) are refused until the operator signs them with `backup-key sign`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type Database from 'better-sqlite3';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { E } from '../../../panel/http/errors.ts';
import { UNSIGNED_DETAIL } from '../../../panel/services/backups/archive-signature.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { editArchiveDb, fillStore, makeBackupPanel, relist, runBackupKey, type BackupPanel } from './backup-fixture.ts';
import { readZip, writeZip, type RawEntry } from './raw-zip.ts';

const editedDb = (p: BackupPanel, good: RawEntry[], edit: (db: Database.Database) => void) => editArchiveDb(p.dir, good, edit);

async function restore(p: BackupPanel, name: string, entries: RawEntry[]): Promise<{ error: string; unchanged: boolean }> {
  writeFileSync(join(p.dir, 'backups', name), writeZip(entries));
  const before = p.db.serialize();
  const answer = await p.call('PUT', '/backups/restore', { backup_name: name });
  return { error: answer.body.error, unchanged: before.equals(p.db.serialize()) };
}

test('an edited, re-zipped archive is refused by its signature and changes nothing', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    const good = await readZip(join(p.dir, 'backups', made.backup_name));
    const list = JSON.parse(good.find((e) => e.name === 'filelist.json')!.data.toString());
    assert.equal(list.version, 2);
    assert.match(list.signature, /^[0-9a-f]{64}$/);
    await p.ok('DELETE', '/account/carol');

    const box = SecretBox.open(p.dir);
    const keys = generateKeyPair();
    const edits: Record<string, RawEntry[]> = {
      'counters.zip': editedDb(p, good, (db) => db.prepare('UPDATE traffic_statistics SET traffic_download = traffic_download * 1000').run()),
      'planted-peer.zip': editedDb(p, good, (db) => {
        db.prepare(`INSERT INTO accounts (name, username, password, status, server_id, ip, b_download, b_upload, mangle, private_key, public_key)
          VALUES ('mallory', 'mallory', ?, 'enable', 1, ?, 0, 0, 50, '', ?)`).run(box.seal('x-password-123'), (10 << 24) + (1 << 8) + 50, keys.publicKey);
        db.prepare("UPDATE wireguard_counters SET value = 50 WHERE name = 'account_seq'").run();
      }),
      'loopback-server.zip': editedDb(p, good, (db) => db.prepare("UPDATE wireguard_servers SET address = '127.0.0.1/8', net_first = 2130706432, net_last = 2147483647 WHERE name = 'two'").run()),
      'list-field.zip': relist(good, (l) => { l.statistics = false; }),
      'no-signature.zip': relist(good, (l) => { delete l.signature; }),
      'other-key.zip': relist(good, (l) => { l.signature = SecretBox.fromKey(randomBytes(32)).mac('backup-manifest/1', 'x'); }),
      'extra-file.zip': relist([...good, { name: 'dataplane/wg9.conf', data: Buffer.from('[Interface]\n') }]),
    };
    for (const [name, entries] of Object.entries(edits)) {
      const { error, unchanged } = await restore(p, name, entries);
      assert.equal(error, E.BACKUP_FILE_MISMATCH, name);
      assert.ok(unchanged, `${name}: the live store changed`);
    }
    assert.equal((await p.ok('GET', '/system/status')).status, 'OK');
    // re-zipping the genuine content (another compression, another order) is no edit
    const { error } = await restore(p, 'rezipped.zip', [...good].reverse().map((e) => ({ ...e, deflate: true })));
    assert.equal(error, '');
    assert.equal((await p.ok('GET', '/account/carol')).name, 'carol');
  } finally {
    await p.close();
  }
});

test('an archive of the previous release (unsigned) is refused until the operator signs it with backup-key sign', async () => {
  const p = await makeBackupPanel();
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', {});
    const good = await readZip(join(p.dir, 'backups', made.backup_name));
    await p.ok('DELETE', '/account/carol');
    const legacy = relist(good, (l) => { l.version = 1; delete l.signature; });
    const legacyPath = join(p.dir, 'legacy.zip');
    writeFileSync(legacyPath, writeZip(legacy));
    const refused = await restore(p, 'legacy.zip', legacy);
    assert.equal(refused.error, `${E.BACKUP_READER} ${UNSIGNED_DETAIL}`);
    assert.ok(refused.unchanged);

    // a tampered signed archive is not signed again; a legacy one is, in the backups folder
    const tamperedPath = join(p.dir, 'tampered.zip');
    writeFileSync(tamperedPath, writeZip(relist(good, (l) => { l.statistics = true; })));
    const tampered = await runBackupKey(['sign', '--data', p.dir, '--archive', tamperedPath]);
    assert.equal(tampered.code, 1);
    assert.match(tampered.out, /does not verify/);
    const signed = await runBackupKey(['sign', '--data', p.dir, '--archive', legacyPath]);
    assert.equal(signed.code, 0, signed.out);
    const list = JSON.parse((await readZip(join(p.dir, 'backups', 'legacy.zip'))).find((e) => e.name === 'filelist.json')!.data.toString());
    assert.equal(list.version, 2);
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: 'legacy.zip' }), 'success');
    assert.equal((await p.ok('GET', '/account/carol')).name, 'carol');
  } finally {
    await p.close();
  }
});
