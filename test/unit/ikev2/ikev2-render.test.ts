// Pure IKEv2 renderers and parsers: swanctl.conf and strongswan.conf fixtures, settings mapping, vici codec, list-sa.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeMessage, encodeMessage } from '../../../panel/dataplane/ipsec/linux/vici-client.ts';
import { parseListSa } from '../../../panel/dataplane/render/parse-vici-sas.ts';
import { pluginList, renderStrongswanConf } from '../../../panel/dataplane/render/strongswan-conf.ts';
import { quote, renderSwanctlConf } from '../../../panel/dataplane/render/swanctl-conf.ts';
import { proposalList, timings, userConn, userPool, userSecret } from '../../../panel/dataplane/render/swanctl-tree.ts';
import { IKEV2_DEFAULTS } from '../../../panel/schemas/ikev2.ts';
import { uptimeText } from '../../../panel/services/ikev2/ikev2-sessions.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const ALICE = { username: 'alice', password: 'pa"ss\\word', address: '10.8.0.2', dns: ['10.8.0.1', '9.9.9.9'] };

test('swanctl.conf of two accounts matches the fixture (probe conn, one conn + pool each, no secret in the file)', () => {
  const text = renderSwanctlConf({
    settings: { ...IKEV2_DEFAULTS }, caCert: 'CA', serverCert: 'CERT', serverKey: 'KEY', serverId: 'vpn.example.test',
    users: [ALICE, { username: 'bob-2', password: 'x', address: '10.8.0.3', dns: [] }],
  });
  assert.equal(text, fixture('swanctl.conf'));
  assert.ok(!text.includes('pa"ss') && !text.includes('secret'), 'EAP secrets go over vici only');
  assert.equal(quote('pa"ss\\word'), '"pa\\"ss\\\\word"');
  assert.throws(() => quote('a\nb'), /line breaks/);
});

test('strongswan.conf matches the fixture: own vici socket, legacy MD4, libipsec before netlink, charondebug levels', () => {
  const text = renderStrongswanConf({
    viciSocket: '/var/lib/vpnhost/ipsec/charon.vici', logFile: '/var/lib/vpnhost/ipsec/charon.log', libipsec: true,
    settings: { ...IKEV2_DEFAULTS, charondebug_ike: 2, charondebug_knl: -1 },
  });
  assert.equal(text, fixture('strongswan.conf'));
  assert.ok(!pluginList(false).includes('kernel-libipsec'));
  assert.ok(pluginList(true).indexOf('kernel-libipsec') < pluginList(true).indexOf('kernel-netlink'));
});

test('advanced settings map onto swanctl options', () => {
  const s = {
    ...IKEV2_DEFAULTS, uniqueids: 'yes', closeaction: 'restart', dpdaction: 'hold', type: 'passthrough', strictcrlpolicy: 'yes',
    rekey: 'yes', reauth: 'no', ikelifetime: 10800, margintime: 540, lifetime: 3600, rekeyfuzz: 50, forceencaps: 'no',
  };
  const conn = userConn(s, ALICE, 'vpn')['u-alice'] as Record<string, any>;
  assert.equal(conn.unique, 'replace');
  assert.equal(conn.encap, 'no');
  assert.equal(conn.rekey_time, '10260s');
  assert.equal(conn.reauth_time, '0');
  assert.equal(conn.rand_time, '270s');
  assert.equal(conn.remote.revocation, 'strict');
  assert.deepEqual(conn.pools, ['p-alice']);
  const child = conn.children['u-alice'];
  assert.equal(child.close_action, 'start');
  assert.equal(child.dpd_action, 'trap');
  assert.equal(child.mode, 'pass');
  assert.equal(child.rekey_time, '3060s');
  assert.deepEqual(timings({ ...IKEV2_DEFAULTS }).ike, { rekey_time: '0', reauth_time: '0s', over_time: '600s', rand_time: '600s' });
  assert.deepEqual(proposalList('aes256-sha1, aes128-sha1!'), ['aes256-sha1', 'aes128-sha1']);
  assert.deepEqual(userPool(ALICE), { 'p-alice': { addrs: '10.8.0.2/32', dns: ['10.8.0.1', '9.9.9.9'] } });
  assert.deepEqual(userSecret(ALICE), { id: 's-alice', type: 'EAP', data: 'pa"ss\\word', owners: ['alice'] });
});

test('vici codec: known bytes and a nested round trip', () => {
  const bytes = encodeMessage({ a: 'b', l: ['x', 'yz'], s: { k: 'v' } });
  assert.equal(bytes.toString('hex'), [
    '03', '01', '61', '0001', '62', // key/value a=b
    '04', '01', '6c', '05', '0001', '78', '05', '0002', '797a', '06', // list l [x, yz]
    '01', '01', '73', '03', '01', '6b', '0001', '76', '02', // section s { k=v }
  ].join(''));
  const tree = { conn: { local: { certs: ['-----BEGIN CERT'] }, version: '2' }, empty: {}, list: [] };
  assert.deepEqual(decodeMessage(encodeMessage(tree)), tree);
  assert.throws(() => decodeMessage(Buffer.from([3, 5, 0x61])), /truncated/);
  assert.throws(() => decodeMessage(Buffer.from([2])), /unbalanced/);
});

test('list-sa events parse into SAs: EAP identity, remote host, virtual IP, uptime, bytes over the CHILD SAs', () => {
  const sas = parseListSa({
    'u-alice': {
      uniqueid: '7', version: '2', state: 'ESTABLISHED', 'remote-host': '198.51.100.2', 'remote-port': '4500',
      'remote-id': 'alice', 'remote-eap-id': 'alice', established: '65', 'remote-vips': ['10.8.0.2'],
      'child-sas': { 'u-alice-3': { 'bytes-in': '100', 'bytes-out': '40' }, 'u-alice-4': { 'bytes-in': '1', 'bytes-out': '2' } },
    },
  });
  assert.deepEqual(sas, [{
    conn: 'u-alice', uniqueId: '7', username: 'alice', state: 'ESTABLISHED', remoteHost: '198.51.100.2', virtualIp: '10.8.0.2',
    establishedSeconds: 65, bytesIn: 101, bytesOut: 42,
  }]);
  assert.equal(parseListSa({ x: { state: 'CONNECTING', 'remote-id': 'bob' } })[0].username, 'bob');
});

test('uptime text', () => {
  assert.equal(uptimeText(0), '0s');
  assert.equal(uptimeText(65), '1m 5s');
  assert.equal(uptimeText(3 * 86400 + 7200 + 5), '3d 2h 0m 5s');
});
