// Access hashes: 80 hex chars, only the SHA-256 stored, bound IP canonicalised, verify by digest and IP.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { AccessHashService } from '../../../panel/services/access-hashes.ts';
import { openDatabase } from '../../../panel/store/db.ts';
import { AccessHashRepository } from '../../../panel/store/repositories/access-hashes.ts';

describe('AccessHashService', () => {
  it('creates 80-hex hashes, stores only their digest, lists without them', () => {
    const db = openDatabase(':memory:');
    const service = new AccessHashService(new AccessHashRepository(db), { now: () => new Date('2030-05-01T10:00:00Z') });
    const a = service.create('::ffff:192.0.2.1', 'billing');
    const b = service.create('2001:db8::1');
    assert.match(a.hash, /^[0-9a-f]{80}$/);
    assert.notEqual(a.hash, b.hash);
    assert.equal(a.ip, '192.0.2.1');
    const rows = db.prepare('SELECT * FROM access_hashes').all() as Array<Record<string, unknown>>;
    assert.equal(rows[0].digest, createHash('sha256').update(a.hash).digest('hex'));
    assert.ok(!JSON.stringify(rows).includes(a.hash) && !JSON.stringify(rows).includes(b.hash));
    assert.deepEqual(service.list(), [
      { id: a.id, ip: '192.0.2.1', comment: 'billing', created_at: '2030-05-01T10:00:00.000Z' },
      { id: b.id, ip: '2001:db8::1', comment: '', created_at: '2030-05-01T10:00:00.000Z' },
    ]);
    assert.throws(() => service.create('nope'), /not an IP address/);
    db.close();
  });

  it('verifies hash and client IP; deletion revokes', () => {
    const db = openDatabase(':memory:');
    const service = new AccessHashService(new AccessHashRepository(db));
    const { id, hash } = service.create('192.0.2.1');
    assert.ok(service.verify(hash, '192.0.2.1'));
    assert.ok(service.verify(hash, '::ffff:192.0.2.1'));
    assert.ok(!service.verify(hash.toUpperCase(), '192.0.2.1'), 'only the exact lower-case form');
    assert.ok(!service.verify(hash, '192.0.2.2'));
    assert.ok(!service.verify(hash, null));
    assert.ok(!service.verify(undefined, '192.0.2.1'));
    assert.ok(!service.verify(hash.slice(0, 78), '192.0.2.1'));
    assert.ok(!service.verify(`${hash}00`, '192.0.2.1'));
    assert.ok(!service.verify('z'.repeat(80), '192.0.2.1'));
    assert.equal(service.delete(id), true);
    assert.equal(service.delete(id), false);
    assert.ok(!service.verify(hash, '192.0.2.1'));
    db.close();
  });
});
