// Fixture tests of the `ip -j addr show dev <if>` parser (fixtures shaped as iproute2 6.x prints them).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseIpAddrJson } from '../../../panel/dataplane/render/parse-ip-link.ts';

test('reads index, MTU, up flag and global addresses', () => {
  const text = JSON.stringify([{
    ifindex: 7, ifname: 'wg12', flags: ['POINTOPOINT', 'MULTICAST', 'NOARP', 'UP', 'LOWER_UP'], mtu: 1380,
    qdisc: 'fq_codel', operstate: 'UNKNOWN', link_type: 'none',
    addr_info: [
      { family: 'inet', local: '10.0.1.1', prefixlen: 24, scope: 'global', label: 'wg12' },
      { family: 'inet6', local: 'fd00:0:0:7::1', prefixlen: 64, scope: 'global' },
      { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
    ],
  }]);
  assert.deepEqual(parseIpAddrJson(text), {
    ifindex: 7, name: 'wg12', mtu: 1380, up: true, addresses: ['10.0.1.1/24', 'fd00:0:0:7::1/64'],
  });
});

test('a down link without addresses', () => {
  const text = '[{"ifindex":2,"ifname":"wg91001","flags":["POINTOPOINT","MULTICAST","NOARP"],"mtu":1420,"qdisc":"noop","operstate":"DOWN","group":"default","txqlen":500,"link_type":"none","addr_info":[]}]';
  assert.deepEqual(parseIpAddrJson(text), { ifindex: 2, name: 'wg91001', mtu: 1420, up: false, addresses: [] });
});

test('no link → null; bad JSON throws', () => {
  assert.equal(parseIpAddrJson('[]'), null);
  assert.equal(parseIpAddrJson(''), null);
  assert.throws(() => parseIpAddrJson('Device "wg1" does not exist.'));
});
