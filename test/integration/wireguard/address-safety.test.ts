// Addresses that would cut the host off are refused (reserved ranges, host networks, the listen address), nothing written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedDriver, SIMULATED_HOST_NETWORKS } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from './panel-fixture.ts';

type Method = 'POST' | 'PUT';

async function refused(p: TestPanel, method: Method, path: string, form: Record<string, string>, text: string, status: number) {
  const answer = await p.call(method, path, form);
  assert.deepEqual(answer.body, { error: text, msg: '', status: 'error' }, `${method} ${path} ${JSON.stringify(form)}`);
  assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(form)}`);
}

/** A driver whose host also has a LAN `10.199.0.1/30` on eth1, a routed `172.20.0.0/16` and IPv6 `fd00:99::1/64`. */
function hostDriver(): SimulatedDriver {
  return new SimulatedDriver({
    hostNetworks: [
      ...SIMULATED_HOST_NETWORKS,
      { cidr: '10.199.0.1/30', source: 'address', dev: 'eth1' },
      { cidr: '172.20.0.0/16', source: 'route', dev: 'eth1' },
      { cidr: 'fd00:99::1/64', source: 'address', dev: 'eth1' },
    ],
  });
}

const RESERVED_V4 = ['127.0.0.1/8', '127.0.0.2/30', '0.0.0.1/8', '0.0.0.0/0', '169.254.0.1/16', '224.0.0.1/24', '239.1.1.1/16', '255.255.255.254/24', '255.255.255.255/32'];
const RESERVED_V6 = ['::1/128', '::/0', '::2/64', '::ffff:127.0.0.1/120', 'fe80::1/64', 'fe80:1::1/64', 'ff02::1/64', 'ff00::1/8'];

test('server address and address_ipv6: every reserved range is refused on create and edit, nothing written', async () => {
  const p = await makePanel({ driver: hostDriver() });
  try {
    const base = { external_ip: '192.0.2.30', endpoint: '192.0.2.30' };
    for (const address of RESERVED_V4) await refused(p, 'POST', '/wireguard', { ...base, address }, OWN.RESERVED_ADDRESS, 400);
    for (const address_ipv6 of RESERVED_V6) {
      await refused(p, 'POST', '/wireguard', { ...base, ipv6: '1', address_ipv6 }, OWN.RESERVED_ADDRESS, 400);
    }
    assert.deepEqual(await p.ok('GET', '/wireguard'), {});
    assert.deepEqual(await p.driver.listInterfaces(), []);

    await p.ok('POST', '/wireguard', { ...base, name: 's1', address: '10.0.1.1/24', ipv6: '1', address_ipv6: 'fd00:1::1/64' });
    const before = await p.ok('GET', '/wireguard/s1');
    for (const address of RESERVED_V4) await refused(p, 'PUT', '/wireguard/s1', { address }, OWN.RESERVED_ADDRESS, 400);
    for (const address_ipv6 of RESERVED_V6) await refused(p, 'PUT', '/wireguard/s1', { address_ipv6 }, OWN.RESERVED_ADDRESS, 400);
    assert.deepEqual(await p.ok('GET', '/wireguard/s1'), before);
    assert.deepEqual((await p.driver.inspect('wg0'))?.addresses, ['10.0.1.1/24', 'fd00:1::1/64']);
  } finally {
    await p.close();
  }
});

test("the issue's lock-out request (address=127.0.0.1/8 with external_ip and endpoint) is refused", async () => {
  const p = await makePanel();
  try {
    await refused(p, 'POST', '/wireguard', { address: '127.0.0.1/8', external_ip: '192.0.2.30', endpoint: '192.0.2.30' }, OWN.RESERVED_ADDRESS, 400);
    assert.equal(p.driver.stats().ensureCalls, 0);
  } finally {
    await p.close();
  }
});

test('server subnets overlapping a host network or the listen address are refused with the spec text', async () => {
  const p = await makePanel({ driver: hostDriver(), listenAddress: '192.0.2.80' });
  try {
    const inUse = [
      '203.0.113.9/24', // the simulated uplink eth0
      '203.0.0.1/16', // a wider subnet holding the uplink
      '10.199.0.2/30', // the LAN address's subnet
      '10.199.0.5/24', // a subnet holding the LAN
      '172.20.5.1/24', // inside a routed network
      '192.0.2.1/24', // holds the panel's listen address
    ];
    for (const address of inUse) await refused(p, 'POST', '/wireguard', { address }, E.IP_OR_SUBNET_IN_USE, 409);
    await refused(p, 'POST', '/wireguard', { ipv6: '1', address_ipv6: 'fd00:99::5/64' }, E.IP_OR_SUBNET_IN_USE, 409);
    await refused(p, 'POST', '/wireguard', { ipv6: '1', address_ipv6: 'fd00::1/16' }, E.IP_OR_SUBNET_IN_USE, 409);
    assert.deepEqual(await p.ok('GET', '/wireguard'), {});

    // Next to them is fine; an edit keeping its own address is not refused by its own interface's networks.
    const made = await p.ok('POST', '/wireguard', { name: 'ok', address: '10.199.0.5/30', ipv6: '1', address_ipv6: 'fd00:98::1/64' });
    assert.equal(made.address, '10.199.0.5/30');
    await p.ok('PUT', '/wireguard/ok', { address: '10.199.0.5/30', address_ipv6: 'fd00:98::1/64', dns_1: '9.9.9.9' });
    for (const address of inUse) await refused(p, 'PUT', '/wireguard/ok', { address }, E.IP_OR_SUBNET_IN_USE, 409);
    await refused(p, 'PUT', '/wireguard/ok', { address_ipv6: 'fd00:99::7/64' }, E.IP_OR_SUBNET_IN_USE, 409);
    assert.equal((await p.ok('GET', '/wireguard/ok')).address, '10.199.0.5/30');
  } finally {
    await p.close();
  }
});

test('a generated server subnet skips the host networks', async () => {
  const driver = new SimulatedDriver({
    hostNetworks: [...SIMULATED_HOST_NETWORKS, { cidr: '10.0.1.0/24', source: 'route', dev: 'eth1' }, { cidr: 'fd00:0:0:1::/64', source: 'route', dev: 'eth1' }],
  });
  const p = await makePanel({ driver });
  try {
    const made = await p.ok('POST', '/wireguard', { ipv6: '1' });
    assert.equal(made.address, '10.0.2.1/24');
    assert.deepEqual((await driver.inspect(made.interface_name))?.addresses, ['10.0.2.1/24', 'fd00:0:0:2::1/64']);
  } finally {
    await p.close();
  }
});

test('IPv6: the all-zero host of the subnet is refused as server address and as peer address, like the IPv4 network address', async () => {
  const p = await makePanel();
  try {
    await refused(p, 'POST', '/wireguard', { ipv6: '1', address_ipv6: 'fd00:1::/64' }, OWN.WRONG_ADDRESS_IPV6, 400);
    await refused(p, 'POST', '/wireguard', { address: '10.0.1.0/24' }, OWN.WRONG_ADDRESS, 400);
    await p.ok('POST', '/wireguard', { name: 's', address: '10.0.1.1/24', ipv6: '1', address_ipv6: 'fd00:1::1/64' });
    await refused(p, 'PUT', '/wireguard/s', { address_ipv6: 'fd00:1::/64' }, OWN.WRONG_ADDRESS_IPV6, 400);
    await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.0' }, E.IP_NOT_IN_RANGE, 422);
    await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.5', allowed_IPs_ipv6: 'fd00:1::' }, E.IP_NOT_IN_RANGE, 422);
    await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.5', allowed_IPs_ipv6: 'fd00:1::/128' }, E.IP_NOT_IN_RANGE, 422);
    await p.ok('POST', '/account', { wg_name: 's', name: 'a', allowed_IPs: '10.0.1.5', allowed_IPs_ipv6: 'fd00:1::5' });
    await refused(p, 'PUT', '/account/a', { allowed_IPs_ipv6: 'fd00:1::' }, E.IP_NOT_IN_RANGE, 422);
    assert.deepEqual((await p.driver.inspect('wg0'))?.peers.map((peer) => peer.allowedIps), [['10.0.1.5/32', 'fd00:1::5/128']]);
  } finally {
    await p.close();
  }
});
