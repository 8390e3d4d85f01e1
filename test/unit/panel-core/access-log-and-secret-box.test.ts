// Access-log URL masking (every spelling of a one-time-link path), SecretBox's opened-value cache and its MACs.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { loggableUrl } from '../../../panel/http/access-log.ts';
import { loggableText } from '../../../panel/logger.ts';
import { SecretBox } from '../../../shared/secret-box.ts';

describe('access log', () => {
  it('masks one-time-link keys in the path and every query string, and keeps API paths as they are', () => {
    assert.equal(loggableUrl('/otl/0123abcd?x=1'), '/otl/[redacted]?[redacted]');
    assert.equal(loggableUrl('/api/v1/account/alice'), '/api/v1/account/alice');
    assert.equal(loggableUrl(`/api/v1/system/status?access_hash=${'ab'.repeat(40)}&a=b`), '/api/v1/system/status?[redacted]');
    assert.equal(loggableUrl('/api/v1/x?'), '/api/v1/x?[redacted]');
  });

  it('masks a one-time-link key and download token however the path is spelled', () => {
    const key = randomBytes(40).toString('hex');
    const token = randomBytes(32).toString('hex');
    const spelled = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const paths = [
      `/otl/${key}`, `/%6ftl/${key}`, `/%6Ftl/${key}`, `/o%74l/${key}`, `//otl/${key}`, `/otl//${key}`, `/OTL/${key}`,
      `/Otl/${key}/`, `/%256ftl/${key}`, `/otl%2f${key}`, `/otl%2F${key}`, `\\otl\\${key}`, `/otl/${spelled(key)}`,
      `/otl/${key.toUpperCase()}`, `/otl/${key}/${token}/wireguard.conf`, `/%6ftl/${key}/${token}/profile`,
      `//OTL//${key}//${token}//ca.pem`, `/./otl/${key}`, `/x/../otl/${key}/${token}/wireguard.conf`,
      `/api/v1/otl/${key}`, `/api/v1/account/${key}`, `/%2e/otl/${spelled(key)}`,
    ];
    for (const path of paths) {
      for (const url of [path, `${path}?x=1`]) {
        const logged = loggableUrl(url);
        for (const secret of [key, token]) assert.equal(logged.toLowerCase().includes(secret.slice(0, 40)), false, `${url} → ${logged}`);
        assert.ok(logged.includes('[redacted]'), url);
      }
    }
    assert.equal(loggableUrl(`/%6ftl/${key}`), '/otl/[redacted]');
    assert.equal(loggableUrl(`//OTL/${key}?a=b`), '/OTL/[redacted]?[redacted]');
    assert.equal(loggableUrl('/api/v1/otl/list'), '/api/v1/otl/list', 'API paths stay readable');
    assert.equal(loggableUrl('/api/v1/account/al%69ce'), '/api/v1/account/al%69ce', 'nothing to mask: logged as it came');
    const text = loggableText(`GET http://panel.test/%6Ftl/${key}/${token}/wireguard.conf failed; see //otl/${key.toUpperCase()}`);
    assert.equal(text.toLowerCase().includes(key.slice(0, 40)) || text.includes(token.slice(0, 40)), false, text);
  });
});

describe('SecretBox', () => {
  it('opens sealed values repeatedly, and a tampered value fails even after the original was opened', () => {
    const box = SecretBox.fromKey(randomBytes(32));
    const sealed = box.seal('private-key-value');
    assert.equal(box.open(sealed), 'private-key-value');
    assert.equal(box.open(sealed), 'private-key-value');
    const last = sealed.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${sealed.slice(0, -2)}${last}${sealed.at(-1)}`;
    assert.throws(() => box.open(tampered));
    assert.throws(() => SecretBox.fromKey(randomBytes(32)).open(sealed), 'another key cannot open it');
  });

  it('MACs under a key derived per purpose: verifiable by the same data key only, never across purposes', () => {
    const key = randomBytes(32);
    const box = SecretBox.fromKey(key);
    const tag = box.mac('backup-manifest/1', 'manifest');
    assert.match(tag, /^[0-9a-f]{64}$/);
    assert.equal(SecretBox.fromKey(key).verifyMac('backup-manifest/1', 'manifest', tag), true, 'the same data key verifies');
    assert.equal(box.verifyMac('backup-manifest/1', 'manifest!', tag), false);
    assert.equal(box.verifyMac('other/1', 'manifest', tag), false, 'another purpose');
    assert.equal(SecretBox.fromKey(randomBytes(32)).verifyMac('backup-manifest/1', 'manifest', tag), false, 'another data key');
    assert.equal(box.verifyMac('backup-manifest/1', 'manifest', tag.slice(2)), false, 'a short tag');
    assert.notEqual(tag, createHmac('sha256', key).update('manifest').digest('hex'), 'the data key itself never signs');
  });
});
