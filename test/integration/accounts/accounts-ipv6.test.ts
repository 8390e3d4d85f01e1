// Accounts on an IPv6-enabled server get a unique IPv6 address when none is given (spec: generated where possible).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel } from '../wireguard/panel-fixture.ts';

test('POST /account on an IPv6 server generates the peer IPv6 from its IPv4 host offset, unique and in range', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'v6', ipv6: '1', address_ipv6: 'fd10::1/64' }); // 10.0.1.1/24
    await p.ok('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.7', name: 'a' });
    // Someone picked the address the next peer's offset maps to by hand: the next slot is taken instead.
    await p.ok('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.9', allowed_IPs_ipv6: 'fd10::8', name: 'b' });
    await p.ok('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.8', name: 'c' });
    // An empty value means none.
    await p.ok('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.10', allowed_IPs_ipv6: '', name: 'd' });

    const peers = new Map((await p.driver.inspect('wg0'))!.peers.map((peer) => [peer.publicKey, peer.allowedIps.sort()]));
    const ipsOf = async (name: string) => peers.get((await p.ok('GET', `/account/${name}`)).public_key);
    assert.deepEqual(await ipsOf('a'), ['10.0.1.7/32', 'fd10::7/128']);
    assert.deepEqual(await ipsOf('b'), ['10.0.1.9/32', 'fd10::8/128']);
    assert.deepEqual(await ipsOf('c'), ['10.0.1.8/32', 'fd10::1:0:8/128']);
    assert.deepEqual(await ipsOf('d'), ['10.0.1.10/32']);

    const config = await p.ok('GET', '/account/a/config_text');
    assert.match(config, /^Address = 10\.0\.1\.7\/32, fd10::7\/128$/m);
    assert.match(config, /^AllowedIPs = 0\.0\.0\.0\/0, ::\/0$/m);
    assert.equal((await p.ok('GET', '/account/a')).allowed_IPs, '10.0.1.7', 'allowed_IPs stays the bare IPv4 address');

    // A generated address is taken like a given one: nobody else may pick it.
    const clash = await p.call('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.20', allowed_IPs_ipv6: 'fd10::7' });
    assert.equal(clash.body.error, E.IP_IN_USE);

    // Servers without IPv6 hand out none.
    await p.ok('POST', '/wireguard', { name: 'v4' }); // 10.0.2.1/24
    await p.ok('POST', '/account', { wg_name: 'v4', allowed_IPs: '10.0.2.7', name: 'e' });
    const [v4peer] = (await p.driver.inspect('wg1'))!.peers;
    assert.deepEqual(v4peer.allowedIps, ['10.0.2.7/32']);
  } finally {
    await p.close();
  }
});

test('PUT /wireguard keeps peer IPv6 addresses inside: clearing or moving the IPv6 subnet away is refused', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'v6', ipv6: '1', address_ipv6: 'fd20::1/64' });
    await p.ok('POST', '/account', { wg_name: 'v6', allowed_IPs: '10.0.1.5', name: 'a' }); // fd20::5
    const before = (await p.driver.inspect('wg0'))!.addresses;
    for (const [address_ipv6, text, status] of [
      ['', OWN.PEERS_OUTSIDE_ADDRESS, 422],
      ['fd30::1/64', OWN.PEERS_OUTSIDE_ADDRESS, 422],
      ['fd20::5/64', E.IP_OR_SUBNET_IN_USE, 409],
    ] as const) {
      const answer = await p.call('PUT', '/wireguard/v6', { address_ipv6 });
      assert.equal(answer.body.error, text, address_ipv6);
      assert.equal(answer.status, status, address_ipv6);
    }
    assert.deepEqual((await p.driver.inspect('wg0'))!.addresses, before, 'the interface kept its addresses');
    await p.ok('PUT', '/wireguard/v6', { address_ipv6: 'fd20::ffff/48' });
    assert.ok((await p.driver.inspect('wg0'))!.addresses.includes('fd20::ffff/48'));
    await p.ok('DELETE', '/account/a');
    await p.ok('PUT', '/wireguard/v6', { address_ipv6: '' });
    assert.ok((await p.driver.inspect('wg0'))!.addresses.includes('fd00:0:0:1::1/64'), 'a fresh subnet once no peer needs the old one');
  } finally {
    await p.close();
  }
});
