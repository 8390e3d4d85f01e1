// Generated account values stay unique across many creations (name, username, password, keys, mangle).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publicKeyFrom } from '../../../panel/dataplane/keys.ts';
import { AccountListSchema } from '../../../shared/wire/account.ts';
import { makePanel } from '../wireguard/panel-fixture.ts';

test('200 accounts get unique names, usernames, passwords, key pairs and mangle marks', async () => {
  const p = await makePanel({ licenseAccounts: 1000 });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', address: '10.20.0.1/16' });
    // Someone took the name the generator would pick next: it must step around it.
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.20.0.2', name: 'Account_2', username: 'User_3' });
    for (let i = 3; i < 202; i++) await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: `10.20.${i >> 8}.${i & 255}` });
    await p.ok('DELETE', '/account/Account_5');
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.20.1.9' });
    const all = AccountListSchema.parse(await p.ok('GET', '/account'));
    assert.equal(all.length, 200);
    for (const field of ['name', 'username', 'password', 'private_key', 'public_key', 'mangle', 'allowed_IPs'] as const) {
      assert.equal(new Set(all.map((a) => a[field])).size, all.length, `${field} not unique`);
    }
    for (const a of all) {
      assert.match(a.mangle, /^[1-9]\d*$/);
      assert.equal(publicKeyFrom(a.private_key), a.public_key);
    }
    assert.ok(!all.some((a) => a.name === 'Account_5'), 'deleted names are not handed out again');
    assert.equal((await p.driver.inspect('wg0'))?.peers.length, 200);
  } finally {
    await p.close();
  }
});
