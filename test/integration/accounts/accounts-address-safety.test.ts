// Peer addresses in reserved ranges or used by the host are refused on create and edit; nothing reaches the data plane.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../../shared/clock.ts';
import { SimulatedDriver, SIMULATED_HOST_NETWORKS } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { E, OWN } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

async function refused(p: TestPanel, method: 'POST' | 'PUT', path: string, form: Record<string, string>, text: string, status: number) {
  const answer = await p.call(method, path, form);
  assert.deepEqual(answer.body, { error: text, msg: '', status: 'error' }, `${method} ${path} ${JSON.stringify(form)}`);
  assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(form)}`);
}

const RESERVED_V4 = ['127.0.0.1', '127.0.0.5/32', '0.0.0.0', '169.254.1.1', '224.0.0.5', '239.255.255.250', '255.255.255.255'];
const RESERVED_V6 = ['::1', '::', '::ffff:10.0.1.9', 'fe80::5', 'ff02::1', 'ff05::2/128'];

test('account addresses: reserved ranges (IPv4 and IPv6) and host networks are refused, on create and edit', async () => {
  const driver = new SimulatedDriver();
  const clock = manualClock(new Date());
  const p = await makePanel({ driver, clock });
  try {
    await p.ok('POST', '/wireguard', { name: 's', address: '10.0.1.1/24', ipv6: '1', address_ipv6: 'fd00:1::1/64' });
    // Host routes into the server's subnet that appear after the server was made; account checks reuse a host
    // read for up to a second on the panel's clock, so move it past that.
    driver.setHostNetworks([
      ...SIMULATED_HOST_NETWORKS,
      { cidr: '10.0.1.77/32', source: 'route', dev: 'eth1' },
      { cidr: 'fd00:1::77/128', source: 'route', dev: 'eth1' },
    ]);
    clock.advance(1100);
    for (const ip of RESERVED_V4) await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: ip }, OWN.RESERVED_ADDRESS, 400);
    for (const ip of RESERVED_V6) {
      await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.9', allowed_IPs_ipv6: ip }, OWN.RESERVED_ADDRESS, 400);
    }
    await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.77' }, E.IP_IN_USE, 409);
    await refused(p, 'POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.9', allowed_IPs_ipv6: 'fd00:1::77' }, E.IP_IN_USE, 409);
    assert.deepEqual(await p.ok('GET', '/account'), []);
    assert.equal(driver.stats().applyPeersCalls, 0);

    await p.ok('POST', '/account', { wg_name: 's', name: 'a', allowed_IPs: '10.0.1.9', allowed_IPs_ipv6: 'fd00:1::9' });
    const before = await p.ok('GET', '/account/a');
    for (const ip of RESERVED_V4) await refused(p, 'PUT', '/account/a', { allowed_IPs: ip }, OWN.RESERVED_ADDRESS, 400);
    for (const ip of RESERVED_V6) await refused(p, 'PUT', '/account/a', { allowed_IPs_ipv6: ip }, OWN.RESERVED_ADDRESS, 400);
    await refused(p, 'PUT', '/account/a', { allowed_IPs: '10.0.1.77' }, E.IP_IN_USE, 409);
    await refused(p, 'PUT', '/account/a', { allowed_IPs_ipv6: 'fd00:1::77' }, E.IP_IN_USE, 409);
    assert.deepEqual(await p.ok('GET', '/account/a'), before);
    assert.equal(driver.stats().applyPeersCalls, 1);
  } finally {
    await p.close();
  }
});

test("a peer may use its server's subnet although the server's own interface routes it", async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 's', address: '10.0.1.1/24' });
    const hosts = await p.driver.hostNetworks();
    assert.ok(hosts.some((n) => n.dev === 'wg0' && n.cidr === '10.0.1.0/24'), 'the interface route is listed');
    await p.ok('POST', '/account', { wg_name: 's', allowed_IPs: '10.0.1.2' });
  } finally {
    await p.close();
  }
});
