// PUT /backups/restore refuses corrupt archives (truncated, wrong list, extra/missing file, zip-slip, absolute path,
// oversized entry, zip bomb, not a zip, empty, wrong database, foreign data key) with the spec's texts; the live store
// stays byte-identical.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { E } from '../../../panel/http/errors.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { fillStore, makeBackupPanel, relist as relistWith, type BackupPanel } from './backup-fixture.ts';
import { readZip, writeZip, type RawEntry } from './raw-zip.ts';

/** {@link relistWith} re-signed with the panel's own data key: these variants test the checks behind the signature. */
function signedRelist(p: BackupPanel) {
  const box = SecretBox.open(p.dir);
  return (entries: RawEntry[], edit?: (list: any) => void) => relistWith(entries, edit, box);
}

async function expectRefused(p: BackupPanel, name: string, bytes: Buffer, text: string, prefix = false): Promise<void> {
  writeFileSync(join(p.dir, 'backups', name), bytes);
  const before = p.db.serialize();
  const answer = await p.call('PUT', '/backups/restore', { backup_name: name });
  assert.equal(answer.body.status, 'error', name);
  if (prefix) assert.ok(answer.body.error.startsWith(`${text} `), `${name}: ${answer.body.error}`);
  else assert.equal(answer.body.error, text, name);
  assert.ok(answer.status >= 400, `${name}: HTTP ${answer.status}`);
  assert.ok(before.equals(p.db.serialize()), `${name}: the live store changed`);
  assert.deepEqual(readdirSync(join(p.dir, 'backups')).filter((f) => f.startsWith('.')), [], `${name}: work folder left behind`);
}

test('corrupt archives are refused with the spec texts and leave the live store byte-identical', async () => {
  const p = await makeBackupPanel();
  const relist = signedRelist(p);
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', { statistics: '1' });
    const goodBytes = readFileSync(join(p.dir, 'backups', made.backup_name));
    const good = await readZip(join(p.dir, 'backups', made.backup_name));
    assert.deepEqual(good.map((e) => e.name).sort(), ['dataplane/wg0.conf', 'dataplane/wg1.conf', 'filelist.json', 'panel.db']);
    const db = good.find((e) => e.name === 'panel.db')!;
    // the variants differ from a good archive in one respect each
    await p.ok('DELETE', '/account/carol'); // the live store differs from the archive, so a restore would show

    await expectRefused(p, 'truncated.zip', goodBytes.subarray(0, Math.floor(goodBytes.length / 2)), E.BACKUP_OPEN_ARCHIVE, true);
    await expectRefused(p, 'not-a-zip.zip', Buffer.from('this is not a zip file\n'.repeat(20)), E.BACKUP_OPEN_ARCHIVE, true);
    await expectRefused(p, 'empty-file.zip', Buffer.alloc(0), E.BACKUP_EMPTY_ARCHIVE);
    await expectRefused(p, 'empty-zip.zip', writeZip([]), E.BACKUP_EMPTY_ARCHIVE);
    await expectRefused(p, 'no-list.zip', writeZip(good.filter((e) => e.name !== 'filelist.json')), E.BACKUP_READER, true);
    await expectRefused(p, 'bad-list-json.zip', writeZip([{ name: 'filelist.json', data: Buffer.from('{nope') }, ...good.slice(1)]), E.BACKUP_READER, true);
    await expectRefused(p, 'empty-list.zip', writeZip(relist(good, (l) => { l.files = []; })), E.BACKUP_EMPTY_FILE_LIST);
    await expectRefused(p, 'wrong-hash.zip', writeZip(relist(good, (l) => { l.files[0].sha256 = '0'.repeat(64); })), E.BACKUP_FILE_MISMATCH);
    await expectRefused(p, 'wrong-size.zip', writeZip(relist(good, (l) => { l.files[0].size += 1; })), E.BACKUP_FILE_MISMATCH);
    const extra = [...good, { name: 'dataplane/extra.conf', data: Buffer.from('x') }];
    await expectRefused(p, 'extra-file.zip', writeZip([...relist(good).slice(0, 1), ...extra.slice(1)]), E.BACKUP_FILE_COUNT_MISMATCH);
    const missing = relist(good);
    await expectRefused(p, 'missing-file.zip', writeZip(missing.filter((e) => e.name !== 'dataplane/wg1.conf')), E.BACKUP_FILE_COUNT_MISMATCH);
    await expectRefused(p, 'renamed-file.zip',
      writeZip(missing.map((e) => (e.name === 'dataplane/wg1.conf' ? { ...e, name: 'dataplane/wg9.conf' } : e))), E.BACKUP_FILE_MISMATCH);
    await expectRefused(p, 'zip-slip.zip', writeZip(relist([...good, { name: '../../evil.txt', data: Buffer.from('x') }])), E.BACKUP_CREATE_FILE, true);
    await expectRefused(p, 'nested-slip.zip', writeZip(relist([...good, { name: 'dataplane/../../evil.txt', data: Buffer.from('x') }])), E.BACKUP_CREATE_FILE, true);
    await expectRefused(p, 'absolute.zip', writeZip(relist([...good, { name: '/tmp/evil.txt', data: Buffer.from('x') }])), E.BACKUP_CREATE_FILE, true);
    await expectRefused(p, 'backslash.zip', writeZip(relist([...good, { name: '..\\evil.txt', data: Buffer.from('x') }])), E.BACKUP_CREATE_FILE, true);
    // an entry whose data is longer than its declared (and listed) size: the reader stops at the declared size
    const lying = relist(good).map((e) => (e.name === 'dataplane/wg0.conf' ? { ...e, data: Buffer.concat([e.data, Buffer.alloc(4096)]), declaredSize: e.data.length, deflate: true } : e));
    await expectRefused(p, 'size-lie.zip', writeZip(lying), E.BACKUP_UNZIP_FILE, true);
    // wrong database: a valid SQLite file that is no panel store, and a text in its place
    const foreignPath = join(p.dir, 'foreign.db');
    const foreign = new Database(foreignPath);
    foreign.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    foreign.close();
    const withDb = (data: Buffer) => writeZip(relist(good.map((e) => (e.name === 'panel.db' ? { ...e, data } : e))));
    await expectRefused(p, 'foreign-db.zip', withDb(readFileSync(foreignPath)), E.BACKUP_READER, true);
    await expectRefused(p, 'text-db.zip', withDb(Buffer.from('SQLite format 3\u0000 but not really')), E.BACKUP_READER, true);
    await expectRefused(p, 'newer-panel.zip', writeZip(relist(good, (l) => { l.schema_versions.push(999); })), E.BACKUP_READER, true);
    await expectRefused(p, 'no-db.zip', writeZip(relist(good.filter((e) => e.name !== 'panel.db'))), E.BACKUP_READER, true);
    await expectRefused(p, 'foreign-key.zip', writeZip(relist(good, (l) => { l.key_check = 'enc:v1:AAAA.AAAA.AAAA'; })), E.BACKUP_READER, true);
    assert.ok(db.data.subarray(0, 16).toString('latin1').startsWith('SQLite format 3'));

    for (const bad of ['../panel.db', 'x/../../panel.zip', 'nope.zip', '.hidden.zip', 'a b.zip', '']) {
      const answer = await p.call('PUT', '/backups/restore', { backup_name: bad });
      assert.equal(answer.body.error, E.BACKUP_NO_SUCH, bad);
    }
    assert.equal((await p.call('PUT', '/backups/restore', {})).body.error, E.BACKUP_NO_SUCH);

    // the good archive still restores after all that
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
    assert.equal((await p.ok('GET', '/account/carol')).name, 'carol');
  } finally {
    await p.close();
  }
});

test('oversized entries and zip bombs are refused by the reader bounds before anything is written', async () => {
  const p = await makeBackupPanel({ deps: { backups: { limits: { maxEntryBytes: 256 * 1024, maxTotalBytes: 512 * 1024, maxEntries: 50, maxFileListBytes: 64 * 1024 } } } });
  const relist = signedRelist(p);
  try {
    await fillStore(p);
    const made = await p.ok('POST', '/backups', {});
    const good = await readZip(join(p.dir, 'backups', made.backup_name));
    // 64 MiB of zeros deflate to about 64 KiB: listed honestly, refused by size before extraction
    const bomb = relist([...good, { name: 'dataplane/bomb.conf', data: Buffer.alloc(64 * 1024 * 1024), deflate: true }]);
    await expectRefused(p, 'bomb.zip', writeZip(bomb), E.BACKUP_UNZIP_FILE, true);
    const many = relist([...good, ...Array.from({ length: 60 }, (_, i) => ({ name: `dataplane/x${i}.conf`, data: Buffer.from('x') }))]);
    await expectRefused(p, 'many.zip', writeZip(many), E.BACKUP_READER, true);
    const total = relist([...good, ...Array.from({ length: 3 }, (_, i) => ({ name: `dataplane/big${i}.conf`, data: Buffer.alloc(200 * 1024, 1), deflate: true }))]);
    await expectRefused(p, 'total.zip', writeZip(total), E.BACKUP_UNZIP_FILE, true);
    assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
  } finally {
    await p.close();
  }
});
