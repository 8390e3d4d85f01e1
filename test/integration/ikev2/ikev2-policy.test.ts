// IKEv2 clients under the panel's policy (simulated twins): TUN dispatch in the firewall, the TUN shaping tree.
import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import type { SimulatedIpsec } from '../../../panel/dataplane/ipsec/simulated/simulated-ipsec.ts';
import type { SimulatedShaper } from '../../../panel/dataplane/shaping/simulated/simulated-shaper.ts';
import { ipsecShapingTarget } from '../../../panel/services/dataplane-specs.ts';
import type { ServerRow } from '../../../panel/store/repositories/servers.ts';
import { envelope, makeHarness, type Harness } from '../panel-core/harness.ts';

function api(h: Harness) {
  return async (method: 'PUT' | 'POST' | 'DELETE', url: string, form: Record<string, string> = {}) => {
    const e = envelope(await h.call(method, `/api/v1${url}`, { form }));
    assert.equal(e.error, '', `${url}: ${e.error}`);
    return e.msg;
  };
}

test('an ikev2 server dispatches its subnet on ipsec0; the TUN tree follows the daemon and every account change', async () => {
  const h = await makeHarness();
  try {
    const ok = api(h);
    await ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Root', ca_organization: 'Org' });
    await ok('PUT', '/ikev2/generate_server_rsa', {
      server_domain: 'vpn.example.test', server_ip: '198.51.100.10', server_common_name: 'vpn.example.test', server_organization: 'Org',
    });
    await ok('POST', '/wireguard', { name: 'ike', address: '10.77.0.1/24', ikev2: '1' });
    await ok('POST', '/wireguard', { name: 'plain', address: '10.78.0.1/24', ikev2: '0' });
    await ok('POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.5', name: 'alice', username: 'alice_u', password: 'pw-alice', b_download: '8', b_upload: '4' });
    await ok('POST', '/account', { wg_name: 'ike', allowed_IPs: '10.77.0.6', name: 'bob', username: 'bob_u', password: 'pw-bob' });
    await ok('POST', '/account', { wg_name: 'plain', allowed_IPs: '10.78.0.5', name: 'carol', b_download: '3', b_upload: '3' });

    const dump = await h.dataplane.firewall.dump();
    assert.match(dump, /-A VPNHOST-MARK -s 10\.77\.0\.0\/24 -i ipsec0 -j VPNHOST-MARK-wg\d+/);
    assert.match(dump, /-A VPNHOST-FWD -s 10\.77\.0\.0\/24 -i ipsec0 -j VPNHOST-FWD-wg\d+/);
    assert.doesNotMatch(dump, /10\.78\.0\.0\/24 -i ipsec0/, 'a server without ikev2 has no TUN line');

    const shaper = h.dataplane.shaper as SimulatedShaper;
    const ipsec = h.dataplane.ipsec as SimulatedIpsec;
    await assert.rejects(shaper.show('ipsec0'), /does not exist/, 'no TUN while charon is off');
    await ok('PUT', '/ikev2', { enabled: '1' });
    const tree = await shaper.show('ipsec0');
    assert.match(tree, /10\.77\.0\.5/, "alice's class on the TUN");
    assert.doesNotMatch(tree, /10\.78\.0\.5/, 'carol is on a server without ikev2');
    const bobKey = (envelope(await h.call('GET', '/api/v1/account/bob')).msg as { public_key: string }).public_key;
    assert.ok(bobKey);
    assert.equal(await shaper.show('ipsec0', bobKey), '', 'bob is unlimited: no class');

    // an account change is one incremental apply on the TUN (no ensure)
    const before = shaper.stats();
    await ok('PUT', '/account/bob', { b_download: '2', b_upload: '2' });
    const after = shaper.stats();
    assert.equal(after.ensureCalls, before.ensureCalls, 'no rebuild');
    assert.equal(after.applyCalls - before.applyCalls, 2, 'one apply on wgN, one on ipsec0');
    assert.match(await shaper.show('ipsec0'), /10\.77\.0\.6/);
    await ok('DELETE', '/account/alice');
    assert.doesNotMatch(await shaper.show('ipsec0'), /10\.77\.0\.5/);

    // charon crashes (the TUN goes) and reload rebuilds the tree; IKEv2 off removes it
    ipsec.crash();
    const reload = envelope(await h.call('PUT', '/api/v1/system/reload'));
    assert.equal(reload.error, '');
    assert.match(await shaper.show('ipsec0'), /10\.77\.0\.6/);
    await ok('PUT', '/ikev2', { enabled: '0' });
    await assert.rejects(shaper.show('ipsec0'), /does not exist/);
  } finally {
    await h.close();
  }
});

describe('ipsecShapingTarget', () => {
  const row = (address: string, ikev2: number) => ({ address, ikev2 }) as ServerRow;
  it('the one IKEv2 server subnet', () => {
    assert.deepEqual(ipsecShapingTarget('ipsec0', [row('10.77.0.1/24', 1), row('10.78.0.1/24', 0)]), { name: 'ipsec0', address: '10.77.0.0/24' });
  });
  it('the smallest network covering several IKEv2 subnets (minors stay unique)', () => {
    assert.deepEqual(ipsecShapingTarget('ipsec0', [row('10.77.0.1/24', 1), row('10.78.0.1/24', 1)])?.address, '10.76.0.0/14');
    assert.deepEqual(ipsecShapingTarget('ipsec0', [row('10.0.1.1/24', 1), row('10.0.2.1/24', 1)])?.address, '10.0.0.0/22');
  });
  it('null without an IKEv2 server', () => {
    assert.equal(ipsecShapingTarget('ipsec0', [row('10.78.0.1/24', 0)]), null);
  });
});
