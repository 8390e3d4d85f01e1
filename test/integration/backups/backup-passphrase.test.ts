// Restore onto a new machine with only the archive and the backup passphrase (`vpnhost panel backup-key`): the
// archive carries the data key wrapped by the passphrase; a wrong passphrase unlocks nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { fillStore, makeBackupPanel, relist, runBackupKey as run, snapshotAnswers } from './backup-fixture.ts';
import { readZip, writeZip } from './raw-zip.ts';

test('backup passphrase: a fresh machine restores from the archive alone; wrong passphrase and no passphrase refused', async () => {
  const old = await makeBackupPanel();
  const scratch = mkdtempSync(join(tmpdir(), 'vpnhost-passphrase-'));
  try {
    await fillStore(old);
    const before = await snapshotAnswers(old);
    const pass = join(scratch, 'pass.txt');
    writeFileSync(pass, 'correct horse battery staple\n');
    const unwrapped = await old.ok('POST', '/backups', {});
    assert.equal((await run(['set', '--data', old.dir, '--passphrase-file', join(scratch, 'short.txt')])).code, 1);
    writeFileSync(join(scratch, 'short.txt'), 'too short\n');
    assert.match((await run(['set', '--data', old.dir, '--passphrase-file', join(scratch, 'short.txt')])).out, /at least 12 characters/);
    assert.equal((await run(['set', '--data', old.dir, '--passphrase-file', pass])).code, 0);
    assert.equal(statSync(join(old.dir, 'backup-key.json')).mode & 0o777, 0o600);
    old.clock.advance(1000);
    const made = await old.ok('POST', '/backups', { statistics: '1' });
    const archive = join(old.dir, 'backups', made.backup_name);
    const entries = await readZip(archive);
    assert.ok(entries.some((e) => e.name === 'backup-key.json'), 'the wrapped key travels in the archive');
    const dataKey = readFileSync(join(old.dir, 'secret.key'));
    assert.equal(Buffer.concat(entries.map((e) => e.data)).includes(dataKey), false, 'the data key is not in the archive in clear');

    // wrong passphrase: nothing written
    const wrongDir = join(scratch, 'wrong');
    writeFileSync(join(scratch, 'wrong.txt'), 'incorrect horse battery staple\n');
    const wrong = await run(['restore', '--data', wrongDir, '--archive', archive, '--passphrase-file', join(scratch, 'wrong.txt')]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.out, /wrong passphrase/);
    assert.equal(existsSync(join(wrongDir, 'secret.key')), false);
    // an archive made before the passphrase was set carries no key
    const none = await run(['restore', '--data', join(scratch, 'none'), '--archive', join(old.dir, 'backups', unwrapped.backup_name), '--passphrase-file', pass]);
    assert.equal(none.code, 1);
    assert.match(none.out, /carries no backup-key.json/);

    // an edited archive (a planted server address in its list, re-zipped with matching hashes): its signature fails
    // under the unwrapped key before anything is written
    const edited = join(scratch, made.backup_name);
    writeFileSync(edited, writeZip(relist(entries, (l) => { l.created_at = '2020-01-01T00:00:00.000Z'; })));
    const forged = await run(['restore', '--data', join(scratch, 'forged'), '--archive', edited, '--passphrase-file', pass]);
    assert.equal(forged.code, 1);
    assert.ok(forged.out.includes(E.BACKUP_FILE_MISMATCH), forged.out);
    assert.equal(existsSync(join(scratch, 'forged', 'secret.key')), false);

    // the new machine: key unlocked from the archive, panel started on the new directory, restore through the API
    const fresh = join(scratch, 'new-machine');
    const ok = await run(['restore', '--data', fresh, '--archive', archive, '--passphrase-file', pass]);
    assert.equal(ok.code, 0, ok.out);
    assert.ok(readFileSync(join(fresh, 'secret.key')).equals(dataKey));
    assert.equal(statSync(join(fresh, 'secret.key')).mode & 0o777, 0o600);
    const p = await makeBackupPanel({ dir: fresh });
    try {
      p.clock.set(old.clock.now());
      assert.equal(await p.ok('PUT', '/backups/restore', { backup_name: made.backup_name }), 'success');
      assert.deepEqual(await snapshotAnswers(p), before);
      // archives of the new machine carry the wrapped key too
      p.clock.advance(1000);
      const next = await p.ok('POST', '/backups', {});
      assert.ok((await readZip(join(fresh, 'backups', next.backup_name))).some((e) => e.name === 'backup-key.json'));
    } finally {
      await p.close();
    }
    // a data directory that already holds another key is not overwritten
    const other = join(scratch, 'other');
    mkdirSync(other);
    const otherKey = randomBytes(32);
    writeFileSync(join(other, 'secret.key'), otherKey, { mode: 0o600 });
    const clash = await run(['restore', '--data', other, '--archive', archive, '--passphrase-file', pass]);
    assert.equal(clash.code, 1);
    assert.match(clash.out, /exists with another key/);
    assert.ok(readFileSync(join(other, 'secret.key')).equals(otherKey));
  } finally {
    await old.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
