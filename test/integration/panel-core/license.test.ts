// License through inject(): free tier, installing keys (valid, expired, foreign, tampered), GET /license, account limit.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { LicenseInstallError } from '../../../panel/services/license.ts';
import { issueLicenseKey } from '../../../panel/services/license-key.ts';
import { envelope, makeHarness, type Harness } from './harness.ts';

const vendor = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const DAY = 86_400_000;

async function status(h: Harness) {
  return envelope(await h.call('GET', '/api/v1/system/status')).msg as Record<string, unknown>;
}

async function addAccounts(h: Harness, count: number): Promise<string[]> {
  const created = envelope(await h.call('POST', '/api/v1/wireguard', { form: { name: 'lic' } }));
  assert.equal(created.status, 'success', created.error);
  const ips = envelope(await h.call('GET', '/api/v1/wireguard/lic/available_ips')).msg as string[];
  const errors: string[] = [];
  for (const ip of ips.slice(0, count)) errors.push(envelope(await h.call('POST', '/api/v1/account', { form: { wg_name: 'lic', allowed_IPs: ip } })).error);
  return errors;
}

describe('license', () => {
  it('without a license: free tier of 50, GET /license answers The license is not active', async () => {
    const h = await makeHarness({ licensePublicKey: vendor.publicKey.export({ type: 'spki', format: 'pem' }) as string });
    try {
      const res = await h.call('GET', '/api/v1/license');
      assert.equal(res.statusCode, 409);
      assert.deepEqual(envelope(res), { error: E.LICENSE_NOT_ACTIVE, msg: '', status: 'error' });
      const s = await status(h);
      assert.match(String(s.license), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/, 'an ISO 8601 timestamp on the free tier');
      assert.equal(s.license_valid, false);
      assert.equal(s.count_accounts_available, 50);
      assert.equal(h.app.services.license.accountLimit(), 50);
    } finally {
      await h.close();
    }
  });

  it('a valid key: GET /license shape, key masked and sealed at rest, status shows expiry and the limit', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const h = await makeHarness({ licensePublicKey: vendor.publicKey, clock: { now: () => now } });
    try {
      const expires = new Date('2030-06-30T23:59:59Z');
      const key = await issueLicenseKey(vendor.privateKey, { accounts: 120, expires }, now);
      const claims = h.app.services.license.install(key);
      assert.equal(claims.accounts, 120);
      const res = await h.call('GET', '/api/v1/license');
      assert.equal(res.statusCode, 200);
      const body = envelope(res);
      const msg = body.msg as Record<string, unknown>;
      assert.deepEqual(Object.keys(msg).sort(), ['accounts', 'expiration_date', 'key', 'last_check', 'valid']);
      assert.equal(msg.accounts, 120);
      assert.equal(msg.valid, true);
      assert.match(msg.expiration_date as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
      assert.equal(new Date(msg.expiration_date as string).getTime(), expires.getTime());
      assert.equal(new Date(msg.last_check as string).getTime(), now.getTime());
      assert.equal(msg.key, `${key.slice(0, 12)}...${key.slice(-6)}`);
      assert.ok(!res.body.includes(key));
      const row = h.db.prepare('SELECT key_sealed FROM license').get() as { key_sealed: string };
      assert.ok(!row.key_sealed.includes(key) && row.key_sealed.startsWith('enc:v1:'));
      assert.ok(!h.logs.join('').includes(key), 'the key never reaches the logs');

      const s = await status(h);
      assert.equal(s.license_valid, true);
      assert.equal(new Date(s.license as string).getTime(), expires.getTime());
      assert.equal(s.count_accounts_available, 120);

      now = new Date('2030-02-01T00:00:00Z');
      const again = envelope(await h.call('GET', '/api/v1/license')).msg as Record<string, unknown>;
      assert.equal(new Date(again.last_check as string).getTime(), now.getTime(), 'GET /license re-verifies');

      now = new Date('2030-07-01T00:00:00Z');
      assert.equal(envelope(await h.call('GET', '/api/v1/license')).error, E.LICENSE_NOT_ACTIVE, 'expired by the clock');
      const after = await status(h);
      assert.equal(after.license_valid, false);
      assert.equal(new Date(String(after.license)).getTime(), now.getTime(), 'expired: the free tier answers the time of the answer');
      assert.equal(after.count_accounts_available, 50);
    } finally {
      await h.close();
    }
  });

  it('refuses expired, foreign, tampered and malformed keys; nothing is installed', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const h = await makeHarness({ licensePublicKey: vendor.publicKey, clock: { now: () => now } });
    try {
      const expired = await issueLicenseKey(vendor.privateKey, { accounts: 10, expires: new Date('2029-12-31T23:59:59Z') }, new Date('2029-01-01'));
      const foreign = await issueLicenseKey(stranger.privateKey, { accounts: 10, expires: new Date('2031-01-01') }, now);
      const good = await issueLicenseKey(vendor.privateKey, { accounts: 10, expires: new Date('2031-01-01') }, now);
      const [head, , sig] = good.split('.');
      const tampered = `${head}.${Buffer.from(JSON.stringify({ accounts: 100000, exp: 1924992000 })).toString('base64url')}.${sig}`;
      const cases: Array<[string, string]> = [[expired, 'expired'], [foreign, 'signature'], [tampered, 'signature'], ['not.a.key', 'malformed'], ['', 'malformed']];
      for (const [key, problem] of cases) {
        assert.throws(() => h.app.services.license.install(key), (err: unknown) => err instanceof LicenseInstallError && err.problem === problem, problem);
      }
      assert.equal((h.db.prepare('SELECT COUNT(*) AS n FROM license').get() as { n: number }).n, 0);
      assert.equal(envelope(await h.call('GET', '/api/v1/license')).error, E.LICENSE_NOT_ACTIVE);
    } finally {
      await h.close();
    }
  });

  it('a panel with another vendor key (or none) treats a stored key as invalid', async () => {
    const key = await issueLicenseKey(vendor.privateKey, { accounts: 77, expires: new Date(Date.now() + 30 * DAY) });
    for (const publicKey of [vendor.publicKey, stranger.publicKey, null]) {
      const h = await makeHarness({ licensePublicKey: publicKey });
      try {
        // Store the key as `panel license install` would, bypassing verification, sealed with this panel's box.
        h.db.prepare("INSERT INTO license (id, key_sealed, installed_at) VALUES (1, ?, '2030-01-01')").run(SecretBox.open(h.dir).seal(key));
        const expected = publicKey === vendor.publicKey ? 77 : 50;
        assert.equal(h.app.services.license.accountLimit(), expected);
        const body = envelope(await h.call('GET', '/api/v1/license'));
        assert.equal(body.error, expected === 77 ? '' : E.LICENSE_NOT_ACTIVE);
      } finally {
        await h.close();
      }
    }
  });

  it('the account limit of the license is enforced by POST /account', async () => {
    const h = await makeHarness({ licensePublicKey: vendor.publicKey });
    try {
      h.app.services.license.install(await issueLicenseKey(vendor.privateKey, { accounts: 2, expires: new Date(Date.now() + 30 * DAY) }));
      const errors = await addAccounts(h, 3);
      assert.deepEqual(errors, ['', '', E.ACCOUNT_LIMIT_EXCEEDED]);
      const s = await status(h);
      assert.equal(s.count_accounts, 2);
      assert.equal(s.count_accounts_available, 0);
    } finally {
      await h.close();
    }
  });
});
