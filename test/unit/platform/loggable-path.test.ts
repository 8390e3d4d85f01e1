// The platform's access-log path: one-time-link keys and download tokens masked however the path is spelled
// (percent-encoded, doubly encoded, repeated slashes, dot segments, backslashes), queries and opaque tokens too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggablePath, loggableText } from '../../../module/platform/logger.ts';

const KEY = '7f'.repeat(40);
const TOKEN = 'Qm9va2luZy1kb3dubG9hZC10b2tlbi0xMjM0NTY3';

test('a one-time-link key and its download token are masked in every spelling of the path', () => {
  const spellings = [
    `/otl/${KEY}`, `/%6ftl/${KEY}`, `/%6Ftl/${KEY}`, `/%256ftl/${KEY}`, `//otl//${KEY}`, `/x/../otl/${KEY}`, `/./otl/${KEY}`,
    `\\otl\\${KEY}`, `/otl%2F${KEY}`, `/OTL/${KEY}`,
  ];
  for (const path of spellings) {
    const logged = loggablePath(path);
    assert.equal(logged.includes(KEY), false, `${path} -> ${logged}`);
    assert.match(logged, /^\/otl\/\[redacted\]$/i, path);
  }
  for (const file of ['wireguard.conf', 'ca.pem', 'profile']) {
    assert.equal(loggablePath(`/%6ftl/${KEY}/${TOKEN}/${file}?x=1`), `/otl/[redacted]/[redacted]/${file}?[redacted]`);
    assert.equal(loggablePath(`/otl%2f${KEY}%2f${TOKEN}%2f${file}`), `/otl/[redacted]/[redacted]/${file}`);
  }
});

test('opaque tokens anywhere are masked; ordinary paths and UUIDs stay readable', () => {
  assert.equal(loggablePath(`/client/password/reset/${TOKEN}`), '/client/password/reset/[redacted]');
  assert.equal(loggablePath('/client/services/123e4567-e89b-12d3-a456-426614174000/ajax/connect/otl'), '/client/services/123e4567-e89b-12d3-a456-426614174000/ajax/connect/otl');
  assert.equal(loggablePath('/admin/roles?next=/admin'), '/admin/roles?[redacted]');
  assert.equal(loggablePath('/caf%C3%A9'), '/café');
});

test('paths inside free text (an error message) are masked the same way', () => {
  const text = loggableText(`Route GET:/%6ftl/${KEY} not found`);
  assert.equal(text, 'Route GET:/otl/[redacted] not found');
});
