// Every error of POST/PUT /wireguard in the spec's order of checks, the range edges, and nothing written on failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from './panel-fixture.ts';

async function expectError(p: TestPanel, method: 'POST' | 'PUT', path: string, form: Record<string, string>, text: string) {
  const answer = await p.call(method, path, form);
  assert.equal(answer.body.status, 'error', `${JSON.stringify(form)} should fail with ${text}`);
  assert.equal(answer.body.error, text, JSON.stringify(form));
  assert.equal(answer.body.msg, '');
  assert.ok(answer.status >= 400 && answer.status < 500);
}

test('POST /wireguard checks in the spec order: each fix reveals the next error', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'taken' }); // wg0, 51820, 10.0.1.1/24
    const taken = await p.ok('GET', '/wireguard/taken');
    const keys = generateKeyPair();
    const body: Record<string, string> = {
      name: 'taken', interface_name: 'eth0', private_key: 'not-a-key', listen_port: '51820', external_ip: 'nowhere',
      address: '10.0.1.129/25', dns_1: '1.1.1', dns_2: 'dns.example', mtu: '9101',
    };
    const steps: Array<[string, () => void]> = [
      [E.NAME_IN_USE, () => (body.name = 'bad name!')],
      [E.WRONG_INTERFACE_NAME, () => (body.interface_name = 'wg0')],
      [E.WRONG_NAME, () => (body.name = 'fresh')],
      [E.KEYS_INVALID, () => ((body.private_key = keys.privateKey), (body.public_key = taken.public_key))],
      [E.KEYS_INVALID, () => (body.public_key = keys.publicKey)],
      [E.INTERFACE_IN_USE, () => (body.interface_name = 'wg7')],
      [E.PORT_IN_USE, () => (body.listen_port = '51819')],
      [E.WRONG_EXTERNAL_IP, () => (body.external_ip = '198.51.100.1')],
      [E.WRONG_PORT, () => (body.listen_port = '51830')],
      [E.IP_OR_SUBNET_IN_USE, () => (body.address = '10.0.2.1/24')],
      [E.WRONG_DNS1, () => (body.dns_1 = '1.1.1.1')],
      [E.WRONG_DNS2, () => (body.dns_2 = '8.8.4.4')],
      [OWN.WRONG_MTU, () => (body.mtu = '9100')],
    ];
    for (const [text, fix] of steps) {
      await expectError(p, 'POST', '/wireguard', body, text);
      fix();
    }
    assert.equal(Object.keys(await p.ok('GET', '/wireguard')).length, 1, 'failed requests must not store anything');
    assert.equal(p.driver.stats().ensureCalls, 1, 'failed requests must not touch the data plane');
    const made = await p.ok('POST', '/wireguard', body);
    assert.equal(made.name, 'fresh');
    assert.equal(made.interface_name, 'wg7');
    assert.equal(made.listen_port, '51830');
  } finally {
    await p.close();
  }
});

test('POST /wireguard formats and ranges', async () => {
  const p = await makePanel();
  try {
    const bad: Array<[Record<string, string>, string]> = [
      [{ interface_name: 'wg' }, E.WRONG_INTERFACE_NAME],
      [{ interface_name: 'wgX' }, E.WRONG_INTERFACE_NAME],
      [{ interface_name: 'wg12345678901234' }, E.WRONG_INTERFACE_NAME],
      [{ name: '' }, E.WRONG_NAME],
      [{ name: 'online' }, E.NAME_IN_USE],
      [{ name: 'info' }, E.NAME_IN_USE],
      [{ name: 'a.b' }, E.WRONG_NAME],
      [{ public_key: generateKeyPair().publicKey }, E.KEYS_INVALID],
      [{ private_key: generateKeyPair().privateKey, public_key: generateKeyPair().publicKey }, E.KEYS_INVALID],
      [{ listen_port: '51819' }, E.WRONG_PORT],
      [{ listen_port: '65536' }, E.WRONG_PORT],
      [{ listen_port: 'abc' }, E.WRONG_PORT],
      [{ listen_port: '' }, E.WRONG_PORT],
      [{ external_ip: '300.1.1.1' }, E.WRONG_EXTERNAL_IP],
      [{ external_ip: '1.2.3.4/33' }, E.WRONG_EXTERNAL_IP],
      [{ address: 'abc' }, OWN.WRONG_ADDRESS],
      [{ address: '10.0.9.0/24' }, OWN.WRONG_ADDRESS],
      [{ address: '10.0.9.1' }, OWN.WRONG_ADDRESS],
      [{ address: '10.0.9.1/31' }, OWN.WRONG_ADDRESS],
      [{ dns_1: '::g' }, E.WRONG_DNS1],
      [{ dns_2: '8.8.8' }, E.WRONG_DNS2],
      [{ mtu: '9101' }, OWN.WRONG_MTU],
      [{ mtu: '-1' }, OWN.WRONG_MTU],
      [{ mtu: '67' }, OWN.WRONG_MTU],
      [{ keep_alive: '-1' }, OWN.WRONG_KEEP_ALIVE],
      [{ keep_alive: '2147483648' }, OWN.WRONG_KEEP_ALIVE],
      [{ allowed_ips: '0.0.0.0/0, nope' }, OWN.WRONG_ALLOWED_IPS],
      [{ endpoint: '-bad-.example' }, OWN.WRONG_ENDPOINT],
      [{ endpoint: '300.1.1.1' }, OWN.WRONG_ENDPOINT],
      [{ internal_traffic: '2' }, OWN.WRONG_INTERNAL_TRAFFIC],
      [{ ipv6: 'yes' }, OWN.WRONG_IPV6_FLAG],
      [{ address_ipv6: '10.0.0.1/24' }, OWN.WRONG_ADDRESS_IPV6],
      [{ b_download: '10001' }, OWN.WRONG_B_DOWNLOAD],
      [{ b_download: '-1' }, OWN.WRONG_B_DOWNLOAD],
      [{ b_upload: '10001' }, OWN.WRONG_B_UPLOAD],
      [{ ikev2: 'x' }, OWN.WRONG_IKEV2_FLAG],
    ];
    for (const [form, text] of bad) await expectError(p, 'POST', '/wireguard', form, text);
    assert.deepEqual(await p.ok('GET', '/wireguard'), {});

    const good: Array<Record<string, string>> = [
      { listen_port: '51820', mtu: '0', keep_alive: '0', b_download: '0', b_upload: '0' },
      { listen_port: '65535', mtu: '9100', keep_alive: '65535', b_download: '10000', b_upload: '10000' },
      { mtu: '68', internal_traffic: 'false', ikev2: '0', endpoint: '2001:db8::1' },
    ];
    for (const form of good) {
      const made = await p.ok('POST', '/wireguard', form);
      for (const [key, value] of Object.entries(form)) {
        if (key in made && key !== 'internal_traffic' && key !== 'ikev2') assert.equal(String(made[key]), value, key);
      }
    }
    assert.equal(Object.keys(await p.ok('GET', '/wireguard')).length, 3);
  } finally {
    await p.close();
  }
});

test('PUT /wireguard checks in the spec order and refuses addresses that strand peers', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'one' }); // wg0 51820 10.0.1.1/24
    const two = await p.ok('POST', '/wireguard', { name: 'two' }); // wg1 51821 10.0.2.1/24
    await p.ok('POST', '/account', { wg_name: 'one', allowed_IPs: '10.0.1.200' });
    const keys = generateKeyPair();
    const body: Record<string, string> = {
      private_key: 'short', listen_port: '51821', external_ip: '1.2.3', address: '10.0.2.1/24', dns_1: 'x', dns_2: 'y',
      b_upload: '10001',
    };
    const steps: Array<[string, () => void]> = [
      [E.KEYS_INVALID, () => (body.private_key = two.private_key)],
      [E.KEYS_INVALID, () => (body.private_key = keys.privateKey)],
      [E.PORT_IN_USE, () => (body.listen_port = '65536')],
      [E.WRONG_EXTERNAL_IP, () => (body.external_ip = '203.0.113.9')],
      [E.WRONG_PORT, () => (body.listen_port = '51820')],
      [E.IP_OR_SUBNET_IN_USE, () => (body.address = '10.0.1.200/24')],
      [E.IP_OR_SUBNET_IN_USE, () => (body.address = '10.0.1.1/25')],
      [OWN.PEERS_OUTSIDE_ADDRESS, () => (body.address = '10.0.1.254/24')],
      [E.WRONG_DNS1, () => (body.dns_1 = '9.9.9.9')],
      [E.WRONG_DNS2, () => (body.dns_2 = '')],
      [OWN.WRONG_B_UPLOAD, () => (body.b_upload = '10000')],
    ];
    const before = await p.ok('GET', '/wireguard/one');
    for (const [text, fix] of steps) {
      await expectError(p, 'PUT', '/wireguard/one', body, text);
      fix();
    }
    assert.deepEqual(await p.ok('GET', '/wireguard/one'), before, 'failed edits change nothing');
    const after = await p.ok('PUT', '/wireguard/one', body);
    assert.equal(after.address, '10.0.1.254/24');
    assert.equal(after.public_key, keys.publicKey);
    assert.equal(after.dns_2, '');
    assert.equal((await p.driver.inspect('wg0'))?.publicKey, keys.publicKey);
    for (const port of ['0', '65536', '-5']) await expectError(p, 'PUT', '/wireguard/one', { listen_port: port }, E.WRONG_PORT);
    await expectError(p, 'PUT', '/wireguard/one', { public_key: generateKeyPair().publicKey }, E.KEYS_INVALID);
    assert.equal((await p.ok('PUT', '/wireguard/one', { public_key: keys.publicKey })).public_key, keys.publicKey);
  } finally {
    await p.close();
  }
});
