// Security lines of the panel: access hashes and the license changed here or by another process (the CLI) are logged,
// as warn lines marked `security`, never with the hash or the key.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox } from '../../../shared/secret-box.ts';
import { AccessHashService } from '../../../panel/services/access-hashes.ts';
import { issueLicenseKey } from '../../../panel/services/license-key.ts';
import { LicenseService } from '../../../panel/services/license.ts';
import { databasePath, openDatabase } from '../../../panel/store/db.ts';
import { AccessHashRepository } from '../../../panel/store/repositories/access-hashes.ts';
import { LicenseRepository } from '../../../panel/store/repositories/license.ts';
import { makeHarness, type Harness } from '../panel-core/harness.ts';

/** Security lines logged since `from` (an index into h.logs). */
function events(h: Harness, from = 0): Array<Record<string, unknown>> {
  return h.logs
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.security === true);
}

const status = (h: Harness) => h.call('GET', '/api/v1/system/status');

describe('panel security lines', () => {
  it('log access hashes created and deleted by the panel and by another process, at warn, without the hash', async () => {
    const h = await makeHarness();
    const other = openDatabase(databasePath(h.dir));
    try {
      const created = events(h).filter((e) => e.event === 'access_hash_created');
      assert.deepEqual(created.map((e) => [e.level, e.ip]), [[40, '127.0.0.1']], 'the harness hash');
      assert.equal((await status(h)).statusCode, 200);
      const cli = new AccessHashService(new AccessHashRepository(other));
      const extra = cli.create('192.0.2.9', 'from the cli');
      let mark = h.logs.length;
      assert.equal((await status(h)).statusCode, 200);
      assert.deepEqual(events(h, mark).map((e) => [e.event, e.id, e.ip, e.source]), [['access_hash_created', extra.id, '192.0.2.9', 'other process']]);
      mark = h.logs.length;
      cli.delete(extra.id);
      assert.equal((await status(h)).statusCode, 200);
      assert.deepEqual(events(h, mark).map((e) => [e.event, e.id, e.source]), [['access_hash_deleted', extra.id, 'other process']]);
      mark = h.logs.length;
      assert.equal((await status(h)).statusCode, 200);
      assert.deepEqual(events(h, mark), [], 'nothing changed, nothing logged');
      const own = h.app.services.accessHashes.create('192.0.2.10');
      h.app.services.accessHashes.delete(own.id);
      assert.deepEqual(events(h, mark).map((e) => e.event), ['access_hash_created', 'access_hash_deleted']);
      assert.equal((await status(h)).statusCode, 200);
      assert.equal(events(h, mark).length, 2, 'the panel\'s own changes are not logged twice');
      const text = h.logs.join('');
      for (const hash of [h.hash, extra.hash, own.hash]) assert.equal(text.includes(hash), false);
    } finally {
      other.close();
      await h.close();
    }
  });

  it('log a license installed by the panel or by another process, with accounts and expiry, never the key', async () => {
    const vendor = generateKeyPairSync('ed25519');
    const now = new Date('2030-01-01T00:00:00Z');
    const h = await makeHarness({ licensePublicKey: vendor.publicKey, clock: { now: () => now } });
    const other = openDatabase(databasePath(h.dir));
    try {
      assert.equal((await status(h)).statusCode, 200);
      const first = await issueLicenseKey(vendor.privateKey, { accounts: 120, expires: new Date('2030-06-30T23:59:59Z') }, now);
      let mark = h.logs.length;
      h.app.services.license.install(first);
      assert.deepEqual(events(h, mark).map((e) => [e.event, e.accounts, e.level]), [['license_changed', 120, 40]]);
      const second = await issueLicenseKey(vendor.privateKey, { accounts: 300, expires: new Date('2030-12-31T23:59:59Z') }, now);
      new LicenseService({ repo: new LicenseRepository(other), secretBox: SecretBox.open(h.dir), publicKey: vendor.publicKey, clock: { now: () => now } }).install(second);
      mark = h.logs.length;
      assert.equal((await status(h)).statusCode, 200);
      assert.deepEqual(events(h, mark).map((e) => [e.event, e.accounts, e.source]), [['license_changed', 300, 'other process']]);
      mark = h.logs.length;
      assert.equal((await status(h)).statusCode, 200);
      assert.deepEqual(events(h, mark), [], 'the same key again is no change');
      const text = h.logs.join('');
      for (const key of [first, second]) assert.equal(text.includes(key), false);
    } finally {
      other.close();
      await h.close();
    }
  });
});
