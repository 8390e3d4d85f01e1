// Edge cases of /wireguard and /account bodies and data-plane refusals: wrong JSON types, ports held outside the panel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from './panel-fixture.ts';

async function json(p: TestPanel, method: 'POST' | 'PUT', path: string, payload: unknown) {
  const res = await p.app.inject({
    method,
    url: `/api/v1${path}`,
    headers: { cookie: p.cookie, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, body: res.json() };
}

test('a JSON boolean or null for a text parameter is refused, never taken as the text "true"', async () => {
  const p = await makePanel();
  try {
    for (const field of ['name', 'interface_name', 'external_ip', 'dns_1', 'endpoint', 'private_key']) {
      for (const value of [true, false, null]) {
        const answer = await json(p, 'POST', '/wireguard', { [field]: value });
        assert.equal(answer.status, 400, `${field}=${value}`);
        assert.deepEqual(answer.body, { error: OWN.BAD_REQUEST, msg: '', status: 'error' }, `${field}=${value}`);
      }
    }
    assert.deepEqual(await p.ok('GET', '/wireguard'), {}, 'nothing was created');
    // Flags still take JSON booleans, numbers still count as their decimal text.
    const server = (await json(p, 'POST', '/wireguard', { name: 7, internal_traffic: true, ikev2: false })).body.msg;
    assert.equal(server.name, '7');
    assert.equal(server.internal_traffic, true);
    assert.equal(server.ikev2, false);

    for (const field of ['wg_name', 'allowed_IPs', 'name', 'username', 'password', 'status', 'public_key']) {
      const answer = await json(p, 'POST', '/account', { wg_name: '7', allowed_IPs: '10.0.1.2', [field]: true });
      assert.equal(answer.body.error, OWN.BAD_REQUEST, field);
    }
    assert.deepEqual(await p.ok('GET', '/account'), []);
    await p.ok('POST', '/account', { wg_name: '7', allowed_IPs: '10.0.1.2', name: 'a' });
    for (const field of ['password', 'status', 'allowed_IPs', 'wg_name']) {
      assert.equal((await json(p, 'PUT', '/account/a', { [field]: false })).body.error, OWN.BAD_REQUEST, field);
    }
    assert.equal((await p.ok('GET', '/account/a')).status, 'enable');
  } finally {
    await p.close();
  }
});

test('a listen port held outside the panel answers Port already in use (409), not a 500, and leaves nothing behind', async () => {
  const p = await makePanel();
  try {
    // A WireGuard interface the store does not know holds 51820 (as another process's socket would).
    await p.driver.ensureInterface({
      name: 'wg900', privateKey: generateKeyPair().privateKey, listenPort: 51820, address: '10.200.0.1/24',
      addressIpv6: null, mtu: 0,
    });
    const created = await p.call('POST', '/wireguard', {});
    assert.equal(created.status, 409);
    assert.deepEqual(created.body, { error: E.PORT_IN_USE, msg: '', status: 'error' });
    assert.deepEqual(await p.ok('GET', '/wireguard'), {}, 'the row was removed again');
    assert.equal(await p.driver.inspect('wg0'), null, 'no half-made interface');

    const server = await p.ok('POST', '/wireguard', { name: 'srv', listen_port: '51821' });
    const moved = await p.call('PUT', '/wireguard/srv', { listen_port: '51820' });
    assert.equal(moved.status, 409);
    assert.equal(moved.body.error, E.PORT_IN_USE);
    assert.deepEqual(await p.ok('GET', '/wireguard/srv'), server, 'the old row is back');
    assert.equal((await p.driver.inspect('wg0'))?.listenPort, 51821, 'the interface kept its port');
  } finally {
    await p.close();
  }
});

test('texts of our own get the status of their kind: stranded peers 422', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.200' });
    const answer = await p.call('PUT', '/wireguard/srv', { address: '10.0.1.1/25' });
    assert.equal(answer.body.error, OWN.PEERS_OUTSIDE_ADDRESS);
    assert.equal(answer.status, 422);
  } finally {
    await p.close();
  }
});
