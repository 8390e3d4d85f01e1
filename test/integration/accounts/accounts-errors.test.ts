// Every error of POST/PUT /account in the spec's order of checks, the limit, range edges, nothing written on failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

async function expectError(p: TestPanel, method: 'POST' | 'PUT', path: string, form: Record<string, string>, text: string) {
  const answer = await p.call(method, path, form);
  assert.equal(answer.body.status, 'error', `${JSON.stringify(form)} should fail with ${text}`);
  assert.equal(answer.body.error, text, JSON.stringify(form));
  assert.ok(answer.status >= 400 && answer.status < 500);
}

test('POST /account checks in the spec order: each fix reveals the next error', async () => {
  const p = await makePanel();
  try {
    const server = await p.ok('POST', '/wireguard', { name: 'srv' }); // 10.0.1.1/24
    const other = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'taken', username: 'takenuser' });
    const keys = generateKeyPair();
    const body: Record<string, string> = {
      wg_name: 'nope', name: 'bad name', username: 'takenuser', allowed_IPs: '10.0.1.300', private_key: 'junk',
      status: 'on', password: '', b_download: '10001', b_upload: '-1',
    };
    const steps: Array<[string, () => void]> = [
      [E.WIREGUARD_SERVER_NOT_VALID, () => (body.wg_name = 'srv')],
      [E.WRONG_NAME, () => (body.name = 'taken')],
      [E.NAME_IN_USE, () => (body.name = 'newname')],
      [E.USERNAME_IN_USE, () => (body.username = 'bad user')],
      [E.WRONG_USERNAME, () => (body.username = 'newuser')],
      [E.WRONG_IP, () => (body.allowed_IPs = '10.0.1.2')],
      [E.IP_IN_USE, () => (body.allowed_IPs = '10.0.2.5')],
      [E.IP_NOT_IN_RANGE, () => (body.allowed_IPs = '10.0.1.9/32')],
      [E.KEYS_INVALID, () => ((body.private_key = keys.privateKey), (body.public_key = other.public_key))],
      [E.KEYS_INVALID, () => (body.public_key = keys.publicKey)],
      [OWN.WRONG_STATUS, () => (body.status = 'disable')],
      [OWN.WRONG_PASSWORD, () => (body.password = 'ok-password')],
      [OWN.WRONG_B_DOWNLOAD, () => (body.b_download = '10000')],
      [OWN.WRONG_B_UPLOAD, () => (body.b_upload = '0')],
    ];
    const calls = p.driver.stats().applyPeersCalls;
    for (const [text, fix] of steps) {
      await expectError(p, 'POST', '/account', body, text);
      fix();
    }
    assert.equal((await p.ok('GET', '/account')).length, 1, 'failed requests must not store anything');
    assert.equal(p.driver.stats().applyPeersCalls, calls, 'failed requests must not touch the data plane');
    const made = await p.ok('POST', '/account', body);
    assert.equal(made.name, 'newname');
    assert.equal(made.status, 'disable');
    assert.equal(made.public_key, keys.publicKey);
    assert.notEqual(server.public_key, made.public_key);
  } finally {
    await p.close();
  }
});

test('POST /account formats, ranges and key rules', async () => {
  const p = await makePanel();
  try {
    const server = await p.ok('POST', '/wireguard', { name: 'srv', address: '10.5.0.1/24' });
    const first = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.5.0.2' });
    const pair = generateKeyPair();
    const bad: Array<[Record<string, string>, string]> = [
      [{ allowed_IPs: '10.5.0.3' }, E.WIREGUARD_SERVER_NOT_VALID],
      [{ wg_name: '', allowed_IPs: '10.5.0.3' }, E.WIREGUARD_SERVER_NOT_VALID],
      [{ wg_name: 'srv' }, E.WRONG_IP],
      [{ wg_name: 'srv', allowed_IPs: '' }, E.WRONG_IP],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.0/24' }, E.WRONG_IP],
      [{ wg_name: 'srv', allowed_IPs: 'abc' }, E.WRONG_IP],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', allowed_IPs_ipv6: 'zz::1' }, E.WRONG_IP],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.1' }, E.IP_IN_USE],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.0' }, E.IP_NOT_IN_RANGE],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.255' }, E.IP_NOT_IN_RANGE],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', allowed_IPs_ipv6: 'fd00::3' }, E.IP_NOT_IN_RANGE],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', name: 'x'.repeat(65) }, E.WRONG_NAME],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', username: 'ü' }, E.WRONG_USERNAME],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', public_key: 'short' }, E.KEYS_INVALID],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', private_key: pair.privateKey, public_key: generateKeyPair().publicKey }, E.KEYS_INVALID],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', public_key: first.public_key }, E.KEYS_INVALID],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', public_key: server.public_key }, E.KEYS_INVALID],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', b_download: '10001' }, OWN.WRONG_B_DOWNLOAD],
      [{ wg_name: 'srv', allowed_IPs: '10.5.0.3', b_upload: 'x' }, OWN.WRONG_B_UPLOAD],
    ];
    for (const [form, text] of bad) await expectError(p, 'POST', '/account', form, text);
    const edge1 = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.5.0.254', b_download: '0', b_upload: '10000' });
    assert.equal(edge1.b_download, '0');
    assert.equal(edge1.b_upload, '10000');
    const edge2 = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.5.0.3', b_download: '10000', b_upload: '0' });
    assert.equal(edge2.b_download, '10000');
    assert.equal((await p.ok('GET', '/account')).length, 3);
  } finally {
    await p.close();
  }
});

test('the license account limit is checked first and counts every account', async () => {
  const p = await makePanel({ licenseAccounts: 2 });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', status: 'disable' });
    await expectError(p, 'POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.4' }, E.ACCOUNT_LIMIT_EXCEEDED);
    await expectError(p, 'POST', '/account', { wg_name: 'nope', allowed_IPs: 'x' }, E.ACCOUNT_LIMIT_EXCEEDED);
    const status = await p.ok('GET', '/system/status');
    assert.equal(status.count_accounts, 2);
    assert.equal(status.count_accounts_available, 0);
    await p.ok('DELETE', '/account/Account_1');
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.4' });
  } finally {
    await p.close();
  }
});

test('the free tier allows 50 accounts without a license', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    for (let i = 2; i < 52; i++) await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: `10.0.1.${i}` });
    await expectError(p, 'POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.60' }, E.ACCOUNT_LIMIT_EXCEEDED);
  } finally {
    await p.close();
  }
});

test('PUT /account checks in the spec order and changes nothing on failure', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/wireguard', { name: 'other' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'mine' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'theirs' });
    const before = await p.ok('GET', '/account/mine');
    const body: Record<string, string> = { wg_name: 'other', allowed_IPs: '10.0.1', status: 'paused', b_download: '10001' };
    const steps: Array<[string, () => void]> = [
      [E.WIREGUARD_SERVER_NOT_VALID, () => (body.wg_name = 'srv')],
      [E.WRONG_EXTERNAL_IP, () => (body.allowed_IPs = '10.0.1.3')],
      [E.IP_IN_USE, () => (body.allowed_IPs = '10.0.2.3')],
      [E.IP_NOT_IN_RANGE, () => (body.allowed_IPs = '10.0.1.2')],
      [OWN.WRONG_STATUS, () => (body.status = 'disable')],
      [OWN.WRONG_B_DOWNLOAD, () => (body.b_download = '10000')],
    ];
    const calls = p.driver.stats().applyPeersCalls;
    for (const [text, fix] of steps) {
      await expectError(p, 'PUT', '/account/mine', body, text);
      fix();
    }
    assert.deepEqual(await p.ok('GET', '/account/mine'), before);
    assert.equal(p.driver.stats().applyPeersCalls, calls);
    const after = await p.ok('PUT', '/account/mine', body);
    assert.equal(after.status, 'disable');
    assert.equal(after.allowed_IPs, '10.0.1.2', 'its own address is not "in use"');
    await expectError(p, 'PUT', '/account/mine', { password: '' }, OWN.WRONG_PASSWORD);
  } finally {
    await p.close();
  }
});
