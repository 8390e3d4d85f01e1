// Per-subsystem changes of one account: each subsystem is called only when its own view of the peer changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firewallChanges, shapingChanges, serverFirewallSpec } from '../../../panel/services/dataplane-specs.ts';
import type { ServerRow } from '../../../panel/store/repositories/servers.ts';

const fw = { mark: 5, address: '10.0.1.2', addressIpv6: null };
const tc = { key: 'K', ipv4: '10.0.1.2', ipv6: null, downloadMbit: 8, uploadMbit: 4 };

test('firewall: add, remove, same peer, moved address, new mark', () => {
  assert.deepEqual(firewallChanges(null, fw), { upsert: [fw], remove: [] });
  assert.deepEqual(firewallChanges(fw, null), { upsert: [], remove: [5] });
  assert.equal(firewallChanges(fw, { ...fw }), null, 'a password or rate change is no firewall call');
  assert.deepEqual(firewallChanges(fw, { ...fw, address: '10.0.1.3' }), { upsert: [{ ...fw, address: '10.0.1.3' }], remove: [] });
  assert.deepEqual(firewallChanges(fw, { ...fw, mark: 6 }), { upsert: [{ ...fw, mark: 6 }], remove: [5] });
});

test('shaping: an unlimited peer costs no call; limits, changes and removals one call', () => {
  const free = { ...tc, downloadMbit: 0, uploadMbit: 0 };
  assert.equal(shapingChanges(null, free), null);
  assert.equal(shapingChanges(free, null), null);
  assert.equal(shapingChanges(free, { ...free, ipv4: '10.0.1.9' }), null);
  assert.deepEqual(shapingChanges(null, tc), { upsert: [tc], remove: [] });
  assert.deepEqual(shapingChanges(tc, null), { upsert: [], remove: ['K'] });
  assert.equal(shapingChanges(tc, { ...tc }), null);
  assert.deepEqual(shapingChanges(tc, free), { upsert: [free], remove: [] }, '0 lifts the limit: its classes go');
  assert.deepEqual(shapingChanges(tc, { ...tc, key: 'L' }), { upsert: [{ ...tc, key: 'L' }], remove: ['K'] });
});

test('server firewall spec: subnets, NAT egress fallback, forwards only to enabled peers', () => {
  const row = {
    interface_name: 'wg3', address: '10.0.3.1/24', ipv6: 1, address_ipv6: 'fd00:3::1/64', listen_port: 51823,
    external_ip: '192.0.2.3/32', external_interface: null, internal_traffic: 0,
  } as unknown as ServerRow;
  const peer = { publicKey: 'K', ipv4: '10.0.3.2', ipv6: 'fd00:3::2/128', mark: 7, downloadMbit: 0, uploadMbit: 0 };
  const forwards = [
    { dst_port: 8080, protocol: 'tcp' as const, to_ip: '10.0.3.2', to_port: 80 },
    { dst_port: 8081, protocol: 'tcp' as const, to_ip: '10.0.3.9', to_port: 80 },
  ];
  const spec = serverFirewallSpec(row, [peer], forwards, 'eth7');
  assert.deepEqual(spec, {
    name: 'wg3', subnets: ['10.0.3.1/24', 'fd00:3::1/64'], listenPort: 51823, externalIp: '192.0.2.3', externalInterface: 'eth7',
    internalTraffic: false, peers: [{ mark: 7, address: '10.0.3.2', addressIpv6: 'fd00:3::2/128' }], forwards: [forwards[0]],
    ipsecDevice: null,
  });
  assert.equal(serverFirewallSpec({ ...row, ikev2: 1 }, [peer], forwards, 'eth7').ipsecDevice, 'ipsec0', 'ikev2=1: the TUN is dispatched too');
});
