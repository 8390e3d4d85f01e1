// Port forwarding through inject(): listing keyed <dst_port>_<protocol> (and the port_forwarding alias), create and
// delete in the short and server-scoped forms, every error text and range edge, nothing changed by a refusal, auth,
// a peer's deletion taking its forwards along, a disabled peer's forwards kept in the store but not in the kernel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';
import { policySnapshot, refused, unauthorized } from '../firewall/policy-fixture.ts';

/** Two servers (`srv` wg0 10.0.1.0/24 port 51820, `two` wg1 10.0.2.0/24) with peers `a`, `b` on srv and `c` on two. */
async function setup(): Promise<TestPanel> {
  const p = await makePanel();
  await p.ok('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10' });
  await p.ok('POST', '/wireguard', { name: 'two', external_ip: '192.0.2.20' });
  await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'a' });
  await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'b' });
  await p.ok('POST', '/account', { wg_name: 'two', allowed_IPs: '10.0.2.2', name: 'c' });
  return p;
}

const natView = (p: TestPanel, server: string) => p.ok<string>('GET', `/wireguard/${server}/firewall_nat_rules`);

test('create, list (both paths), delete: the DNAT appears and goes in the kernel view', async () => {
  const p = await setup();
  try {
    assert.deepEqual(await p.ok('GET', '/wireguard/srv/port_forward'), {});
    const made = await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    assert.deepEqual(made, { dst_port: 8080, protocol: 'tcp', to_peer: 'a', to_port: 80 });
    await p.ok('POST', '/wireguard/srv/port_forward', { dst_port: '8080', protocol: 'udp', to_peer: 'b', to_port: '53' });
    await p.ok('POST', '/wireguard/two/port_forwarding', { dst_port: '9000', protocol: 'tcp', to_peer: 'c', to_port: '22' });
    const listing = {
      '8080_tcp': { dst_port: 8080, protocol: 'tcp', to_peer: 'a', to_port: 80 },
      '8080_udp': { dst_port: 8080, protocol: 'udp', to_peer: 'b', to_port: 53 },
    };
    assert.deepEqual(await p.ok('GET', '/wireguard/srv/port_forward'), listing);
    assert.deepEqual(await p.ok('GET', '/wireguard/srv/port_forwarding'), listing);
    assert.deepEqual(Object.keys(await p.ok('GET', '/wireguard/two/port_forward')), ['9000_tcp']);
    const nat = await natView(p, 'srv');
    assert.match(nat, /--dport 8080 .*-j DNAT --to-destination 10\.0\.1\.2:80/);
    assert.match(nat, /-p udp .*--dport 8080 .*--to-destination 10\.0\.1\.3:53/);
    assert.doesNotMatch(nat, /10\.0\.2\.2/, 'another server\'s forward is not in this server\'s view');
    const natList = await p.ok<Array<{ name: string; action: string; 'to-destination': string }>>('GET', '/firewall/rules/nat');
    assert.ok(natList.some((r) => r.name === 'wg1' && r.action === 'DNAT' && r['to-destination'].startsWith('10.0.2.2:22')), JSON.stringify(natList));

    assert.equal(await p.ok('DELETE', '/port_forward/8080/tcp'), 'success');
    assert.equal(await p.ok('DELETE', '/wireguard/srv/port_forwarding/8080/udp'), 'success');
    assert.equal(await p.ok('DELETE', '/wireguard/two/port_forward/9000/tcp'), 'success');
    assert.deepEqual(await p.ok('GET', '/wireguard/srv/port_forward'), {});
    assert.doesNotMatch(await natView(p, 'srv'), /DNAT/);
  } finally {
    await p.close();
  }
});

test('range edges of dst_port and to_port: 1 and 65535 pass, 0, 65536 and non-integers are refused', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '1', protocol: 'tcp', to_peer: 'a', to_port: '65535' });
    await p.ok('POST', '/port_forward', { dst_port: '65535', protocol: 'udp', to_peer: 'a', to_port: '1' });
    for (const dst of ['0', '65536', '-1', '80.5', 'abc', '', ' 80', '1e3']) {
      await refused(p, 'POST', '/port_forward', { dst_port: dst, protocol: 'tcp', to_peer: 'a', to_port: '80' }, E.PF_DST_PORT_RANGE, 400);
    }
    await refused(p, 'POST', '/port_forward', { protocol: 'tcp', to_peer: 'a', to_port: '80' }, E.PF_DST_PORT_RANGE, 400);
    for (const to of ['0', '65536', 'x', '']) {
      await refused(p, 'POST', '/port_forward', { dst_port: '2000', protocol: 'tcp', to_peer: 'a', to_port: to }, E.PF_TO_PORT_RANGE, 400);
    }
    await refused(p, 'POST', '/port_forward', { dst_port: '2000', protocol: 'tcp', to_peer: 'a' }, E.PF_TO_PORT_RANGE, 400);
    assert.deepEqual(Object.keys(await p.ok('GET', '/wireguard/srv/port_forward')).sort(), ['1_tcp', '65535_udp']);
  } finally {
    await p.close();
  }
});

test('every POST error text, in the spec\'s order of checks, changes nothing', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    const ok = { dst_port: '2000', protocol: 'tcp', to_peer: 'a', to_port: '80' };
    for (const protocol of ['TCP', 'icmp', '', 'tcp ', 'any']) {
      await refused(p, 'POST', '/port_forward', { ...ok, protocol }, E.PF_PROTOCOL, 400);
    }
    const { protocol: _omit, ...noProtocol } = ok;
    await refused(p, 'POST', '/port_forward', noProtocol, E.PF_PROTOCOL, 400);
    // protocol is checked before dst_port, dst_port before the pair, the pair before the listen port, ...
    await refused(p, 'POST', '/port_forward', { ...ok, protocol: 'x', dst_port: '0' }, E.PF_PROTOCOL);
    await refused(p, 'POST', '/port_forward', { ...ok, dst_port: '8080' }, E.PF_ALREADY_ENABLED, 409);
    await refused(p, 'POST', '/port_forward', { ...ok, dst_port: '8080', to_peer: 'b', to_port: '0' }, E.PF_ALREADY_ENABLED, 409);
    await refused(p, 'POST', '/port_forward', { ...ok, dst_port: '8080', to_peer: 'c' }, E.PF_ALREADY_ENABLED, 409);
    await refused(p, 'POST', '/wireguard/two/port_forward', { ...ok, dst_port: '8080', to_peer: 'c' }, E.PF_ALREADY_ENABLED, 409);
    // a WireGuard listen port (of this or another server), either protocol
    const ports = Object.values(await p.ok<Record<string, { listen_port: string }>>('GET', '/wireguard')).map((s) => s.listen_port);
    for (const port of ports) {
      for (const protocol of ['udp', 'tcp']) {
        await refused(p, 'POST', '/port_forward', { ...ok, dst_port: port, protocol }, E.PF_DST_IS_LISTEN_PORT, 422);
      }
    }
    await refused(p, 'POST', '/port_forward', { ...ok, dst_port: ports[0], to_port: '0' }, E.PF_DST_IS_LISTEN_PORT);
    await refused(p, 'POST', '/port_forward', { ...ok, to_port: '0', to_peer: 'nobody' }, E.PF_TO_PORT_RANGE);
    for (const to_peer of ['nobody', '', 'A']) {
      await refused(p, 'POST', '/port_forward', { ...ok, to_peer }, E.PF_INCORRECT_PEER, 422);
    }
    const { to_peer: _p, ...noPeer } = ok;
    await refused(p, 'POST', '/port_forward', noPeer, E.PF_INCORRECT_PEER, 422);
    // the server named by the path or wg_name must exist, and the peer must be one of its peers
    await refused(p, 'POST', '/wireguard/two/port_forward', ok, E.PF_INCORRECT_PEER, 422);
    await refused(p, 'POST', '/port_forward', { ...ok, wg_name: 'two' }, E.PF_INCORRECT_PEER, 422);
    await refused(p, 'POST', '/wireguard/nope/port_forward', ok, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    await refused(p, 'POST', '/wireguard/nope/port_forwarding', { ...ok, protocol: 'x' }, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    await refused(p, 'POST', '/port_forward', { ...ok, wg_name: 'nope' }, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    await refused(p, 'GET', '/wireguard/nope/port_forward', undefined, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    await refused(p, 'GET', '/wireguard/nope/port_forwarding', undefined, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    // a listen port the panel cannot read (a damaged row): `ListenPort processing error`
    p.db.prepare("UPDATE wireguard_servers SET listen_port = 0 WHERE name = 'two'").run();
    await refused(p, 'POST', '/port_forward', ok, E.PF_LISTEN_PORT_ERROR);
  } finally {
    await p.close();
  }
});

test('every DELETE error text, in order (dst_port, protocol, existence), changes nothing', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    for (const port of ['0', '65536', 'abc', '-1', '80.0', '99999']) {
      await refused(p, 'DELETE', `/port_forward/${port}/tcp`, undefined, E.PF_INCORRECT_DST_PORT_PARAM, 400);
    }
    await refused(p, 'DELETE', '/port_forward/0/icmp', undefined, E.PF_INCORRECT_DST_PORT_PARAM);
    for (const protocol of ['TCP', 'icmp', 'x']) {
      await refused(p, 'DELETE', `/port_forward/8080/${protocol}`, undefined, E.PF_INCORRECT_PROTOCOL_PARAM, 400);
    }
    await refused(p, 'DELETE', '/port_forward/8080/udp', undefined, E.PF_NO_SUCH, 422);
    await refused(p, 'DELETE', '/port_forward/65535/tcp', undefined, E.PF_NO_SUCH, 422);
    await refused(p, 'DELETE', '/wireguard/two/port_forward/8080/tcp', undefined, E.PF_NO_SUCH, 422);
    await refused(p, 'DELETE', '/wireguard/nope/port_forward/8080/tcp', undefined, E.WIREGUARD_SERVER_NOT_FOUND, 404);
    assert.equal(await p.ok('DELETE', '/port_forward/8080/tcp'), 'success');
    await refused(p, 'DELETE', '/port_forward/8080/tcp', undefined, E.PF_NO_SUCH, 422);
  } finally {
    await p.close();
  }
});

test('deleting a peer deletes its forwards (store and kernel); a disabled peer keeps them stored, enabled again they are back', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    await p.ok('POST', '/port_forward', { dst_port: '8081', protocol: 'tcp', to_peer: 'b', to_port: '80' });

    await p.ok('PUT', '/account/b', { status: 'disable' });
    assert.deepEqual(Object.keys(await p.ok('GET', '/wireguard/srv/port_forward')), ['8080_tcp', '8081_tcp']);
    assert.doesNotMatch(await natView(p, 'srv'), /10\.0\.1\.3/);
    await p.ok('PUT', '/account/b', { status: 'enable' });
    assert.match(await natView(p, 'srv'), /--dport 8081 .*--to-destination 10\.0\.1\.3:80/);

    await p.ok('DELETE', '/account/a');
    assert.deepEqual(Object.keys(await p.ok('GET', '/wireguard/srv/port_forward')), ['8081_tcp']);
    assert.doesNotMatch(await natView(p, 'srv'), /10\.0\.1\.2/);
    // the pair is free again
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'b', to_port: '8080' });
  } finally {
    await p.close();
  }
});

test('forwards come back after a firewall reset on PUT /system/reload, with no duplicates', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    const before = await policySnapshot(p);
    await p.dataplane.firewall.resetAll();
    assert.notEqual(await policySnapshot(p), before);
    await p.ok('PUT', '/system/reload');
    assert.equal(await policySnapshot(p), before);
  } finally {
    await p.close();
  }
});

test('every port-forward endpoint answers 401 without the access hash', async () => {
  const p = await setup();
  try {
    await unauthorized(p, 'GET', '/wireguard/srv/port_forward');
    await unauthorized(p, 'GET', '/wireguard/srv/port_forwarding');
    await unauthorized(p, 'POST', '/port_forward');
    await unauthorized(p, 'POST', '/wireguard/srv/port_forward');
    await unauthorized(p, 'DELETE', '/port_forward/8080/tcp');
    await unauthorized(p, 'DELETE', '/wireguard/srv/port_forwarding/8080/tcp');
  } finally {
    await p.close();
  }
});

test('a peer moved to another address keeps its forward in the kernel, aimed at the new address', async () => {
  const p = await setup();
  try {
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    await p.ok('PUT', '/account/a', { allowed_IPs: '10.0.1.9' });
    const nat = await natView(p, 'srv');
    assert.match(nat, /--dport 8080 .*-j DNAT --to-destination 10\.0\.1\.9:80/);
    assert.doesNotMatch(nat, /10\.0\.1\.2:80/);
  } finally {
    await p.close();
  }
});

test('a peer delete the data plane refuses brings the peer back with its forwards, in the store and the kernel', async () => {
  const p = await setup();
  try {
    await p.ok('PUT', '/account/a', { b_download: '8', b_upload: '4' });
    await p.ok('POST', '/port_forward', { dst_port: '8080', protocol: 'tcp', to_peer: 'a', to_port: '80' });
    const before = await policySnapshot(p);
    const listing = await p.ok('GET', '/wireguard/srv/port_forward');
    const shaper = p.dataplane.shaper as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = shaper.apply;
    shaper.apply = async () => {
      shaper.apply = original;
      throw new Error('simulated tool failure');
    };
    assert.equal((await p.call('DELETE', '/account/a')).status, 500);
    assert.deepEqual(await p.ok('GET', '/wireguard/srv/port_forward'), listing);
    assert.match(await natView(p, 'srv'), /--dport 8080 .*-j DNAT --to-destination 10\.0\.1\.2:80/);
    assert.equal(await policySnapshot(p), before);
  } finally {
    await p.close();
  }
});
