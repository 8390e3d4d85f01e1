// The passphrase-wrapped data key (scrypt + AES-256-GCM) and the ftp_server forms (plain FTP, explicit FTPS).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { unwrapDataKey, wrapDataKey, wrappedKeySchema } from '../../../panel/services/backups/backup-key.ts';
import { parseFtpServer } from '../../../panel/services/backups/ftp-upload.ts';

test('wrap/unwrap: the right passphrase opens, a wrong one or a changed byte does not; short passphrases refused', () => {
  const key = randomBytes(32);
  const wrapped = wrapDataKey(key, 'correct horse battery staple');
  assert.ok(wrappedKeySchema.safeParse(JSON.parse(JSON.stringify(wrapped))).success);
  assert.equal(JSON.stringify(wrapped).includes(key.toString('base64')), false);
  assert.ok(unwrapDataKey(wrapped, 'correct horse battery staple').equals(key));
  assert.throws(() => unwrapDataKey(wrapped, 'correct horse battery stapl3'), /wrong passphrase/);
  const body = Buffer.from(wrapped.wrapped, 'base64');
  body[0] ^= 1;
  assert.throws(() => unwrapDataKey({ ...wrapped, wrapped: body.toString('base64') }, 'correct horse battery staple'), /wrong passphrase/);
  assert.throws(() => wrapDataKey(key, 'short'), /at least 12/);
  assert.throws(() => wrapDataKey(randomBytes(16), 'correct horse battery staple'), /32 bytes/);
  assert.notEqual(wrapDataKey(key, 'correct horse battery staple').salt, wrapped.salt, 'a fresh salt each time');
});

test('ftp_server: host or ftp:// is plain FTP, ftps:// explicit FTPS', () => {
  assert.deepEqual(parseFtpServer('ftp.example.net'), { host: 'ftp.example.net', secure: false });
  assert.deepEqual(parseFtpServer(' 192.0.2.5 '), { host: '192.0.2.5', secure: false });
  assert.deepEqual(parseFtpServer('ftp://ftp.example.net'), { host: 'ftp.example.net', secure: false });
  assert.deepEqual(parseFtpServer('FTPS://ftp.example.net/'), { host: 'ftp.example.net', secure: true });
});
