// Access-log URL masking and SecretBox's opened-value cache (hits are exact, tampering still fails).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { loggableUrl } from '../../../panel/http/access-log.ts';
import { SecretBox } from '../../../panel/shared/secret-box.ts';

describe('access log', () => {
  it('masks one-time-link keys in the path and every query string, and keeps API paths as they are', () => {
    assert.equal(loggableUrl('/otl/0123abcd?x=1'), '/otl/[redacted]?[redacted]');
    assert.equal(loggableUrl('/api/v1/account/alice'), '/api/v1/account/alice');
    assert.equal(loggableUrl(`/api/v1/system/status?access_hash=${'ab'.repeat(40)}&a=b`), '/api/v1/system/status?[redacted]');
    assert.equal(loggableUrl('/api/v1/x?'), '/api/v1/x?[redacted]');
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
});
