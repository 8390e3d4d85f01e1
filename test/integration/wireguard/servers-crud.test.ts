// POST/GET/PUT/DELETE /wireguard through inject(): generated defaults, wire types, in-place re-apply, deletion rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair, publicKeyFrom } from '../../../panel/dataplane/keys.ts';
import { fixedRouteProbe } from '../../../panel/dataplane/default-route.ts';
import { WireguardServerMapSchema, WireguardServerSchema } from '../../../shared/wire/wireguard.ts';
import { successEnvelopeSchema } from '../../../shared/wire/envelope.ts';
import { makePanel } from './panel-fixture.ts';

test('POST /wireguard with no parameters generates every value and creates the interface', async () => {
  const p = await makePanel();
  try {
    const answer = await p.call('POST', '/wireguard');
    assert.equal(answer.status, 200);
    const server = successEnvelopeSchema(WireguardServerSchema).parse(answer.body).msg;
    assert.equal(server.name, 'Default_1');
    assert.equal(server.interface_name, 'wg0');
    assert.equal(server.listen_port, '51820');
    assert.equal(server.address, '10.0.1.1/24');
    assert.equal(server.external_ip, '203.0.113.1');
    assert.equal(server.dns_1, '1.1.1.1');
    assert.equal(server.dns_2, '8.8.8.8');
    assert.equal(server.internal_traffic, false);
    assert.equal(server.ikev2, false);
    assert.equal(server.keep_alive, 25);
    assert.equal(server.b_download, '0');
    assert.equal(publicKeyFrom(server.private_key), server.public_key);
    const live = await p.driver.inspect('wg0');
    assert.ok(live);
    assert.equal(live.listenPort, 51820);
    assert.equal(live.publicKey, server.public_key);
    assert.deepEqual(live.addresses, ['10.0.1.1/24']);
  } finally {
    await p.close();
  }
});

test('generated names, interfaces, ports, subnets and keys stay unique across creations', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'Default_2', interface_name: 'wg1', listen_port: '51821', address: '10.0.2.1/24' });
    const made = [];
    for (let i = 0; i < 6; i++) made.push(await p.ok('POST', '/wireguard'));
    const all = WireguardServerMapSchema.parse(await p.ok('GET', '/wireguard'));
    assert.equal(Object.keys(all).length, 7);
    const values = Object.values(all);
    for (const field of ['name', 'interface_name', 'listen_port', 'address', 'public_key', 'private_key'] as const) {
      assert.equal(new Set(values.map((s) => s[field])).size, 7, `${field} not unique`);
    }
    assert.deepEqual(made.map((s) => s.name), ['Default_1', 'Default_3', 'Default_4', 'Default_5', 'Default_6', 'Default_7']);
    assert.deepEqual(made.map((s) => s.interface_name), ['wg0', 'wg2', 'wg3', 'wg4', 'wg5', 'wg6']);
    assert.deepEqual(made.map((s) => s.listen_port), ['51820', '51822', '51823', '51824', '51825', '51826']);
    assert.deepEqual(made.map((s) => s.address), ['10.0.1.1/24', '10.0.3.1/24', '10.0.4.1/24', '10.0.5.1/24', '10.0.6.1/24', '10.0.7.1/24']);
    assert.equal((await p.driver.listInterfaces()).length, 7);
  } finally {
    await p.close();
  }
});

test('given parameters are kept and returned with the spec types', async () => {
  const p = await makePanel();
  try {
    const keys = generateKeyPair();
    const server = await p.ok('POST', '/wireguard', {
      name: 'Frankfurt-1_a', interface_name: 'wg42', private_key: keys.privateKey, public_key: keys.publicKey,
      listen_port: '65535', mtu: '1380', keep_alive: '0', allowed_ips: '10.0.0.0/8, 192.168.0.0/16', endpoint: 'vpn.example.com',
      address: '172.16.0.1/16', internal_traffic: '1', external_ip: '198.51.100.7', dns_1: '9.9.9.9', dns_2: '',
      b_download: '10000', b_upload: '0', ikev2: 'true',
    });
    assert.deepEqual(server, {
      name: 'Frankfurt-1_a', interface_name: 'wg42', address: '172.16.0.1/16', listen_port: '65535',
      external_ip: '198.51.100.7', dns_1: '9.9.9.9', dns_2: '', internal_traffic: true, keep_alive: 0,
      b_download: '10000', b_upload: '0', ikev2: true, private_key: keys.privateKey, public_key: keys.publicKey,
    });
    assert.deepEqual(await p.ok('GET', '/wireguard/Frankfurt-1_a'), server);
    const live = await p.driver.inspect('wg42');
    assert.equal(live?.mtu, 1380);
    // A private key alone is completed with its public key.
    const only = generateKeyPair();
    const second = await p.ok('POST', '/wireguard', { private_key: only.privateKey });
    assert.equal(second.public_key, only.publicKey);
  } finally {
    await p.close();
  }
});

test('private keys are stored sealed, never in clear', async () => {
  const p = await makePanel();
  try {
    const server = await p.ok('POST', '/wireguard');
    const row = p.db.prepare('SELECT private_key FROM wireguard_servers WHERE name = ?').get(server.name) as { private_key: string };
    assert.notEqual(row.private_key, server.private_key);
    assert.match(row.private_key, /^enc:v1:/);
  } finally {
    await p.close();
  }
});

test('PUT re-applies port, address, keys and mtu in place (no re-created link) and keeps the peers', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.9' });
    const index = p.driver.linkIndex('wg0');
    const keys = generateKeyPair();
    const changed = await p.ok('PUT', '/wireguard/srv', {
      listen_port: '51999', address: '10.0.1.1/23', private_key: keys.privateKey, mtu: '1300', dns_2: '8.8.4.4',
    });
    assert.equal(changed.listen_port, '51999');
    assert.equal(changed.address, '10.0.1.1/23');
    assert.equal(changed.public_key, keys.publicKey);
    assert.equal(changed.dns_2, '8.8.4.4');
    const live = await p.driver.inspect('wg0');
    assert.equal(live?.listenPort, 51999);
    assert.equal(live?.publicKey, keys.publicKey);
    assert.equal(live?.mtu, 1300);
    assert.deepEqual(live?.addresses, ['10.0.1.1/23']);
    assert.equal(live?.peers.length, 1);
    assert.equal(p.driver.linkIndex('wg0'), index);
    assert.equal(p.driver.stats().restarts, 0);
    assert.deepEqual(await p.ok('GET', '/wireguard/srv'), changed);
    // A change that only concerns clients (DNS) does not touch the interface.
    const ensureBefore = p.driver.stats().ensureCalls;
    await p.ok('PUT', '/wireguard/srv', { dns_1: '9.9.9.9', keep_alive: '15' });
    assert.equal(p.driver.stats().ensureCalls, ensureBefore);
    // An edit may use a port outside the creation range (the spec scopes 51820-65535 to creation).
    assert.equal((await p.ok('PUT', '/wireguard/srv', { listen_port: '443' })).listen_port, '443');
  } finally {
    await p.close();
  }
});

test('DELETE refuses while accounts exist, then removes row and interface', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'acc', status: 'disable' });
    const refused = await p.call('DELETE', '/wireguard/srv');
    assert.equal(refused.body.error, 'Cannot be deleted. There are active peers.');
    assert.equal(refused.body.status, 'error');
    assert.ok(await p.driver.inspect('wg0'));
    await p.ok('DELETE', '/account/acc');
    assert.equal(await p.ok('DELETE', '/wireguard/srv'), 'success');
    assert.equal(await p.driver.inspect('wg0'), null);
    assert.deepEqual(await p.ok('GET', '/wireguard'), {});
    const gone = await p.call('GET', '/wireguard/srv');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error, 'Wireguard server not found');
    assert.equal((await p.call('DELETE', '/wireguard/srv')).body.error, 'Wireguard server not found');
    assert.equal((await p.call('PUT', '/wireguard/srv', { mtu: '1400' })).body.error, 'Wireguard server not found');
  } finally {
    await p.close();
  }
});

test('external_ip and the NAT interface come from the default-route probe', async () => {
  const p = await makePanel({ routeProbe: fixedRouteProbe({ address: '192.0.2.55', interface: 'ens3' }) });
  try {
    const server = await p.ok('POST', '/wireguard');
    assert.equal(server.external_ip, '192.0.2.55');
    const row = p.db.prepare('SELECT external_interface FROM wireguard_servers').get() as { external_interface: string };
    assert.equal(row.external_interface, 'ens3');
  } finally {
    await p.close();
  }
  const q = await makePanel({ routeProbe: fixedRouteProbe({ address: null, interface: null }) });
  try {
    const answer = await q.call('POST', '/wireguard');
    assert.equal(answer.body.status, 'error');
    assert.equal((await q.call('POST', '/wireguard', { external_ip: '192.0.2.9' })).body.msg.external_ip, '192.0.2.9');
  } finally {
    await q.close();
  }
});

test('JSON bodies with numbers and booleans are taken like form values', async () => {
  const p = await makePanel();
  try {
    const res = await p.app.inject({
      method: 'POST',
      url: '/api/v1/wireguard',
      headers: { cookie: p.cookie, 'content-type': 'application/json' },
      payload: { name: 'json', listen_port: 51900, mtu: 1400, internal_traffic: true, keep_alive: 0, b_download: 5 },
    });
    const server = res.json().msg;
    assert.equal(server.listen_port, '51900');
    assert.equal(server.internal_traffic, true);
    assert.equal(server.keep_alive, 0);
    assert.equal(server.b_download, '5');
    const acc = await p.app.inject({
      method: 'POST',
      url: '/api/v1/account',
      headers: { cookie: p.cookie, 'content-type': 'application/json' },
      payload: { wg_name: 'json', allowed_IPs: '10.0.1.2', b_upload: 10000 },
    });
    assert.equal(acc.json().msg.b_upload, '10000');
    const bad = await p.app.inject({
      method: 'POST',
      url: '/api/v1/wireguard',
      headers: { cookie: p.cookie, 'content-type': 'application/json' },
      payload: { listen_port: 51819.5 },
    });
    assert.equal(bad.json().error, 'Wrong Port format');
  } finally {
    await p.close();
  }
});

test('without the access hash every WireGuard and account route answers Not authorized', async () => {
  const p = await makePanel();
  try {
    for (const [method, url] of [['GET', '/wireguard'], ['POST', '/wireguard'], ['GET', '/wireguard/online'], ['GET', '/account'],
      ['POST', '/account'], ['GET', '/account/x/config_qr'], ['DELETE', '/wireguard/x']] as const) {
      const res = await p.app.inject({ method, url: `/api/v1${url}` });
      assert.equal(res.json().error, 'Not authorized', `${method} ${url}`);
    }
    assert.deepEqual(await p.driver.listInterfaces(), []);
  } finally {
    await p.close();
  }
});
