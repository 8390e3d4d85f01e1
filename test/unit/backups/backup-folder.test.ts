// Archive names (no path can leave the folder), creation_date format, new names, listing order and retention.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSafeEntryName } from '../../../panel/services/backups/archive-format.ts';
import { BackupFolder, isoWithMillis, isValidBackupName, ownArchivesOldestFirst } from '../../../panel/services/backups/backup-folder.ts';

test('backup names: one segment ending in .zip; separators, .., hidden and odd characters refused', () => {
  for (const ok of ['backup_2026-03-15_12-00-00-000.zip', 'a.zip', 'Night-1.zip', 'x_y.z.zip']) assert.ok(isValidBackupName(ok), ok);
  for (const bad of ['', '.zip', '../a.zip', 'a/b.zip', 'a\\b.zip', '/a.zip', '..zip', 'a..zip', '.hidden.zip', 'a.zip.part',
    'a b.zip', 'a.ZIP', 'panel.db', 'a\u0000.zip', `${'a'.repeat(202)}.zip`, 'ä.zip']) {
    assert.equal(isValidBackupName(bad), false, JSON.stringify(bad));
  }
});

test('entry names inside archives: relative paths only', () => {
  for (const ok of ['panel.db', 'filelist.json', 'dataplane/wg0.conf', 'a/b/c.txt']) assert.ok(isSafeEntryName(ok), ok);
  for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', 'a/./b', 'a//b', 'a\\b', 'C:/x', 'dir/', 'a b', '..', '.']) {
    assert.equal(isSafeEntryName(bad), false, JSON.stringify(bad));
  }
});

test('creation_date: ISO 8601 with milliseconds and the host offset', () => {
  const text = isoWithMillis(new Date('2026-03-15T12:00:00.042Z'));
  assert.match(text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/);
  assert.equal(new Date(text).getTime(), Date.parse('2026-03-15T12:00:00.042Z'));
});

test('new names are unique, listing is newest first, retention removes only the oldest archives this panel made', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-folder-'));
  try {
    const folder = new BackupFolder(dir);
    const at = new Date('2026-03-15T12:00:00.000Z');
    const first = folder.newName(at);
    assert.equal(first, 'backup_2026-03-15_12-00-00-000.zip');
    writeFileSync(join(dir, first), 'x');
    folder.stamp(first, at);
    const second = folder.newName(at);
    assert.equal(second, 'backup_2026-03-15_12-00-00-000_2.zip', 'same millisecond: suffixed');
    const names: string[] = [first];
    for (let i = 1; i <= 3; i++) {
      const when = new Date(at.getTime() + i * 60_000);
      const name = folder.newName(when);
      writeFileSync(join(dir, name), 'x'.repeat(i));
      folder.stamp(name, when);
      names.push(name);
    }
    writeFileSync(join(dir, 'copied-from-old-machine.zip'), 'old');
    folder.stamp('copied-from-old-machine.zip', new Date(at.getTime() - 86_400_000));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    assert.deepEqual(folder.list().map((b) => b.backup_name), [...names].reverse().concat('copied-from-old-machine.zip'));
    assert.equal(folder.list()[0].size, 3);
    assert.deepEqual(folder.prune(2), [names[1], names[0]]);
    assert.deepEqual(folder.list().map((b) => b.backup_name), [names[3], names[2], 'copied-from-old-machine.zip']);
    assert.equal(folder.pathOf('../notes.txt'), null);
    assert.equal(folder.pathOf('notes.txt'), null);
    assert.equal(folder.pathOf(names[3]), join(dir, names[3]));
    assert.deepEqual(ownArchivesOldestFirst(['b.zip', names[3], names[2], 'backup_x.zip']), [names[2], names[3]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
