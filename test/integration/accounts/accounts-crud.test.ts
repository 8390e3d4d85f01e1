// POST/GET/PUT/DELETE /account through inject(): generated values, wire types, enable/disable on the data plane.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { AccountListSchema, AccountSchema } from '../../../shared/wire/account.ts';
import { successEnvelopeSchema } from '../../../shared/wire/envelope.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

async function peersOf(p: TestPanel, iface = 'wg0') {
  return (await p.driver.inspect(iface))?.peers ?? [];
}

test('POST /account with wg_name and allowed_IPs generates the rest and adds the peer', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const applyBefore = p.driver.stats().applyPeersCalls;
    const answer = await p.call('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.4' });
    assert.equal(answer.status, 200);
    const account = successEnvelopeSchema(AccountSchema).parse(answer.body).msg;
    assert.equal(account.name, 'Account_1');
    assert.equal(account.username, 'User_1');
    assert.match(account.password, /^[A-Za-z0-9]{16}$/);
    assert.equal(account.status, 'enable');
    assert.equal(account.wg_name, 'srv');
    assert.equal(account.allowed_IPs, '10.0.1.4');
    assert.equal(account.b_download, '0');
    assert.equal(account.b_upload, '0');
    assert.match(account.mangle, /^\d+$/);
    assert.equal(p.driver.stats().applyPeersCalls - applyBefore, 1);
    const peers = await peersOf(p);
    assert.deepEqual(peers.map((x) => [x.publicKey, x.allowedIps]), [[account.public_key, ['10.0.1.4/32']]]);
    assert.deepEqual(AccountListSchema.parse(await p.ok('GET', '/account')), [account]);
    assert.deepEqual(await p.ok('GET', `/account/${account.name}`), account);
  } finally {
    await p.close();
  }
});

test('POST /account keeps every given parameter', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', ipv6: '1', address_ipv6: 'fd10::1/64' });
    const keys = generateKeyPair();
    const account = await p.ok('POST', '/account', {
      wg_name: 'srv', allowed_IPs: '10.0.1.5/32', allowed_IPs_ipv6: 'fd10::5', name: 'alice-1', username: 'alice_u',
      password: 'S3cret pass!', status: 'enable', private_key: keys.privateKey, public_key: keys.publicKey,
      b_download: '10000', b_upload: '0',
    });
    assert.deepEqual({ ...account, mangle: 'x' }, {
      name: 'alice-1', username: 'alice_u', password: 'S3cret pass!', status: 'enable', wg_name: 'srv',
      allowed_IPs: '10.0.1.5', b_download: '10000', b_upload: '0', mangle: 'x', private_key: keys.privateKey,
      public_key: keys.publicKey,
    });
    const [peer] = await peersOf(p);
    assert.deepEqual(peer.allowedIps.sort(), ['10.0.1.5/32', 'fd10::5/128']);
    // A public key alone is accepted (the client keeps its private key).
    const own = generateKeyPair();
    const byo = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.6', public_key: own.publicKey });
    assert.equal(byo.public_key, own.publicKey);
    assert.equal(byo.private_key, '');
    // A private key alone is completed with its public key.
    const half = generateKeyPair();
    const derived = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.7', private_key: half.privateKey });
    assert.equal(derived.public_key, half.publicKey);
  } finally {
    await p.close();
  }
});

test('disable parks the peer (no address) until the next traffic sample removes it and keeps the row; enable restores it; one applyPeers each', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const account = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'bob' });
    let calls = p.driver.stats().applyPeersCalls;
    const disabled = await p.ok('PUT', '/account/bob', { status: 'disable' });
    assert.equal(disabled.status, 'disable');
    assert.equal(p.driver.stats().applyPeersCalls - calls, 1);
    assert.deepEqual((await peersOf(p)).map((x) => [x.publicKey, x.allowedIps]), [[account.public_key, []]], 'parked');
    await p.app.services.dataplaneSync.serial(() => p.app.services.statistics.sampleAndSettle());
    assert.deepEqual(await peersOf(p), [], 'removed by the sample');
    assert.equal((await p.ok('GET', '/account/bob')).status, 'disable');
    calls = p.driver.stats().applyPeersCalls;
    // Changing a disabled account's address touches only the store.
    await p.ok('PUT', '/account/bob', { allowed_IPs: '10.0.1.3' });
    assert.equal(p.driver.stats().applyPeersCalls, calls);
    const enabled = await p.ok('PUT', '/account/bob', { status: 'enable' });
    assert.equal(enabled.status, 'enable');
    assert.equal(p.driver.stats().applyPeersCalls - calls, 1);
    assert.deepEqual((await peersOf(p)).map((x) => [x.publicKey, x.allowedIps]), [[account.public_key, ['10.0.1.3/32']]]);
    // Moving an enabled peer is one upsert; password and bandwidth changes need no data-plane call.
    calls = p.driver.stats().applyPeersCalls;
    const moved = await p.ok('PUT', '/account/bob', { allowed_IPs: '10.0.1.77/32' });
    assert.equal(moved.allowed_IPs, '10.0.1.77');
    assert.equal(p.driver.stats().applyPeersCalls - calls, 1);
    assert.deepEqual((await peersOf(p))[0].allowedIps, ['10.0.1.77/32']);
    calls = p.driver.stats().applyPeersCalls;
    const edited = await p.ok('PUT', '/account/bob', { password: 'new-password', b_download: '300', b_upload: '200' });
    assert.equal(edited.password, 'new-password');
    assert.equal(edited.b_download, '300');
    assert.equal(edited.b_upload, '200');
    assert.equal(p.driver.stats().applyPeersCalls, calls);
    assert.deepEqual(await p.ok('GET', '/account/bob'), edited);
  } finally {
    await p.close();
  }
});

test('DELETE removes row and peer; unknown names answer Account not found', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'b', status: 'disable' });
    let calls = p.driver.stats().applyPeersCalls;
    assert.equal(await p.ok('DELETE', '/account/a'), 'success');
    assert.equal(p.driver.stats().applyPeersCalls - calls, 1);
    assert.deepEqual(await peersOf(p), []);
    calls = p.driver.stats().applyPeersCalls;
    assert.equal(await p.ok('DELETE', '/account/b'), 'success');
    // a disabled account's peer may still be parked until the next sample: its key is removed (a no-op when gone)
    assert.equal(p.driver.stats().applyPeersCalls - calls, 1);
    assert.deepEqual(await p.ok('GET', '/account'), []);
    for (const [method, path] of [['GET', '/account/a'], ['PUT', '/account/a'], ['DELETE', '/account/a'],
      ['GET', '/account/a/config_text'], ['GET', '/account/a/config_qr'], ['GET', '/account/a/dump']] as const) {
      const answer = await p.call(method, path, method === 'PUT' ? { status: 'enable' } : undefined);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.deepEqual(answer.body, { error: 'Account not found', msg: '', status: 'error' });
    }
  } finally {
    await p.close();
  }
});

test('passwords and private keys are sealed at rest', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const account = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', password: 'plain-text-pw' });
    const row = p.db.prepare('SELECT password, private_key FROM accounts').get() as { password: string; private_key: string };
    assert.match(row.password, /^enc:v1:/);
    assert.match(row.private_key, /^enc:v1:/);
    const dump = JSON.stringify(p.db.prepare('SELECT * FROM accounts').all());
    assert.ok(!dump.includes('plain-text-pw'));
    assert.ok(!dump.includes(account.private_key));
  } finally {
    await p.close();
  }
});
