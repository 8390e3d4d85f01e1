// License keys: EdDSA JWS issue/verify, expiry, foreign and tampered keys, masking; ISO timestamps with offset.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { endOfDayUtc } from '../../../panel/cli/license-command.ts';
import { isoWithOffset } from '../../../panel/services/iso-time.ts';
import { issueLicenseKey, maskLicenseKey, toLicensePublicKey, verifyLicenseKey } from '../../../panel/services/license-key.ts';

const vendor = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const now = new Date('2030-01-01T00:00:00Z');

describe('license keys', () => {
  it('verifies a key issued with the vendor key and reports its claims', async () => {
    const key = await issueLicenseKey(vendor.privateKey, { accounts: 300, expires: new Date('2031-01-01T00:00:00Z'), subject: 'acme' }, now);
    const verdict = verifyLicenseKey(key, vendor.publicKey, now);
    assert.ok(verdict.ok);
    assert.equal(verdict.claims.accounts, 300);
    assert.equal(verdict.claims.exp, Date.parse('2031-01-01T00:00:00Z') / 1000);
    assert.equal(verdict.claims.sub, 'acme');
    const pem = vendor.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    assert.ok(verifyLicenseKey(key, toLicensePublicKey(pem), now).ok, 'PEM text works too');
  });

  it('refuses expired, foreign, tampered, alg-swapped and malformed keys', async () => {
    const key = await issueLicenseKey(vendor.privateKey, { accounts: 5, expires: new Date('2030-06-01T00:00:00Z') }, now);
    const expired = verifyLicenseKey(key, vendor.publicKey, new Date('2030-06-01T00:00:00Z'));
    assert.ok(!expired.ok);
    assert.equal(expired.problem, 'expired');
    assert.equal(expired.claims?.accounts, 5, 'an expired key still reports its claims');
    assert.equal((verifyLicenseKey(key, other.publicKey, now) as { problem: string }).problem, 'signature');
    assert.equal((verifyLicenseKey(key, null, now) as { problem: string }).problem, 'no-public-key');
    const [head, body, sig] = key.split('.');
    const forged = Buffer.from(JSON.stringify({ accounts: 9999, exp: 2000000000 })).toString('base64url');
    assert.equal((verifyLicenseKey(`${head}.${forged}.${sig}`, vendor.publicKey, now) as { problem: string }).problem, 'signature');
    const none = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    assert.equal((verifyLicenseKey(`${none}.${body}.${sig}`, vendor.publicKey, now) as { problem: string }).problem, 'malformed');
    const noAccounts = Buffer.from(JSON.stringify({ exp: 2000000000 })).toString('base64url');
    assert.equal((verifyLicenseKey(`${head}.${noAccounts}.${sig}`, vendor.publicKey, now) as { problem: string }).problem, 'malformed');
    for (const bad of ['', 'a.b', 'a.b.c.d', '!!.??.**', `${head}.${body}`]) {
      assert.equal((verifyLicenseKey(bad, vendor.publicKey, now) as { problem: string }).problem, 'malformed', bad);
    }
  });

  it('rejects a non-Ed25519 public key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    assert.throws(() => toLicensePublicKey(rsa.publicKey), /Ed25519/);
    assert.equal(toLicensePublicKey(null), null);
    assert.equal(toLicensePublicKey(vendor.privateKey)!.type, 'public');
  });

  it('masks keys and formats dates', () => {
    assert.equal(maskLicenseKey('abcdefghijklmnopqrstuvwxyz0123456789'), 'abcdefghijkl...456789');
    assert.equal(maskLicenseKey('short'), '...');
    assert.equal(endOfDayUtc('2030-02-28')!.toISOString(), '2030-02-28T23:59:59.000Z');
    for (const bad of ['2030-02-30', '2030-13-01', '30-01-01', 'tomorrow']) assert.equal(endOfDayUtc(bad), null, bad);
    const stamp = isoWithOffset(new Date('2030-01-02T03:04:05.678Z'));
    assert.match(stamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    assert.equal(new Date(stamp).getTime(), Date.parse('2030-01-02T03:04:05Z'));
  });
});
