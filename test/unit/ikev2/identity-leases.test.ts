// Identity leases (clients identified by EAP only, e.g. Windows): the shared EAP connection, charon's dhcp plugin
// settings and the DHCP codec of the panel's responder.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildDhcpReply, DHCP, parseDhcpRequest } from '../../../panel/dataplane/ipsec/linux/dhcp-packet.ts';
import { pluginList, renderStrongswanConf } from '../../../panel/dataplane/render/strongswan-conf.ts';
import { renderSwanctlConf } from '../../../panel/dataplane/render/swanctl-conf.ts';
import { SHARED_CONN } from '../../../panel/dataplane/render/swanctl-tree.ts';
import { IKEV2_DEFAULTS } from '../../../panel/schemas/ikev2.ts';
import { buildDhcpRequest } from '../../helpers/dhcp-request.ts';

const DESIRED = {
  settings: { ...IKEV2_DEFAULTS }, caCert: 'CA', serverCert: 'CERT', serverKey: 'KEY', serverId: 'vpn.example.test',
  users: [{ username: 'alice', password: 'x', address: '10.8.0.2', dns: ['10.8.0.1'] }],
};

test('with identity leases one shared connection serves every account: any IKE identity, EAP-Identity, address from the dhcp pool; no per-account conns or pools', () => {
  const perAccount = renderSwanctlConf(DESIRED);
  assert.ok(!perAccount.includes(SHARED_CONN));
  assert.match(perAccount, /u-alice \{[\s\S]*?id = "alice"\n\s+eap_id = "alice"/, 'without leases: the account\'s own connection');
  assert.match(perAccount, /p-alice \{/);
  const text = renderSwanctlConf(DESIRED, { shared: true });
  assert.ok(!text.includes('u-alice') && !text.includes('p-alice'), 'no per-account connection or pool');
  assert.match(text, /pools \{\n*\}/, 'an empty pools section: swanctl --load-pools unloads the per-account pools of before');
  const block = text.slice(text.indexOf(`  ${SHARED_CONN} {`));
  assert.match(block, /pools = "dhcp"/);
  assert.match(block, /remote \{\n\s+auth = "eap-mschapv2"\n\s+id = "%any"\n\s+eap_id = "%any"/);
  assert.match(block, /local \{\n\s+auth = "pubkey"\n\s+id = "vpn\.example\.test"/);
  assert.match(block, /esp_proposals = "aes256-sha256,chacha20poly1305-sha512,aes256-sha1,aes256gcm16-ecp384,3des-sha1"/);
  assert.match(text, /vpnhost-probe \{/, 'the probe connection still checks the proposals');
});

test('strongswan.conf with identity leases loads the dhcp plugin, unicast to the responder, identity as client id', () => {
  const base = { viciSocket: '/d/charon.vici', logFile: '/d/charon.log', libipsec: false, settings: { ...IKEV2_DEFAULTS } };
  assert.ok(!renderStrongswanConf(base).includes('dhcp'));
  const text = renderStrongswanConf({ ...base, identityLeaseServer: '127.0.0.1' });
  assert.match(text, /load = [^\n]* attr dhcp\n/);
  assert.match(text, /dhcp \{\n\s+server = 127\.0\.0\.1\n\s+force_server_address = yes\n\s+identity_lease = yes\n\s+\}/);
  assert.ok(pluginList(false, true).endsWith(' dhcp'));
});

test('DHCP codec: a strongSwan DISCOVER parses; OFFER/ACK echo xid, giaddr and chaddr, carry address, /32, DNS, lease', () => {
  const raw = buildDhcpRequest({ type: DHCP.DISCOVER, xid: 0xdeadbeef, giaddr: '127.0.0.1', clientId: Buffer.from('carol_win') });
  const req = parseDhcpRequest(raw);
  assert.ok(req);
  assert.equal(req.type, DHCP.DISCOVER);
  assert.equal(req.xid, 0xdeadbeef);
  assert.equal(req.giaddr, '127.0.0.1');
  assert.equal(req.clientId?.toString(), 'carol_win');
  assert.deepEqual([...req.chaddr], [0x7a, 0xa7, 1, 2, 3, 4]);
  const reply = buildDhcpReply(req, { type: DHCP.OFFER, yiaddr: '10.8.0.7', serverId: '127.0.0.1', dns: ['10.8.0.1', 'fd00::1', '9.9.9.9'], leaseSeconds: 86400 });
  assert.equal(reply[0], 2, 'BOOTREPLY');
  assert.equal(reply.readUInt32BE(4), 0xdeadbeef);
  assert.deepEqual([...reply.subarray(16, 20)], [10, 8, 0, 7], 'yiaddr');
  assert.deepEqual([...reply.subarray(24, 28)], [127, 0, 0, 1], 'giaddr echoed');
  assert.deepEqual([...reply.subarray(28, 34)], [0x7a, 0xa7, 1, 2, 3, 4], 'chaddr echoed');
  assert.equal(reply.readUInt32BE(236), 0x63825363);
  assert.deepEqual([...reply.subarray(240)], [
    53, 1, 2, 54, 4, 127, 0, 0, 1, 51, 4, 0, 1, 0x51, 0x80, 1, 4, 255, 255, 255, 255, 6, 8, 10, 8, 0, 1, 9, 9, 9, 9, 255,
  ]);
  const nak = buildDhcpReply(req, { type: DHCP.NAK, yiaddr: '10.8.0.7', serverId: '127.0.0.1', dns: [], leaseSeconds: 1 });
  assert.deepEqual([...nak.subarray(16, 20)], [0, 0, 0, 0], 'a NAK hands out nothing');
  assert.deepEqual([...nak.subarray(240)], [53, 1, 6, 54, 4, 127, 0, 0, 1, 255]);
});

test('DHCP codec: replies, short packets, a wrong magic cookie, a truncated option or no message type are not requests', () => {
  const ok = buildDhcpRequest({ type: DHCP.REQUEST, xid: 1, giaddr: '127.0.0.1', clientId: Buffer.from('a'), requestedIp: '10.8.0.7', serverId: '127.0.0.1' });
  const parsed = parseDhcpRequest(ok);
  assert.equal(parsed?.requestedIp, '10.8.0.7');
  assert.equal(parsed?.serverId, '127.0.0.1');
  const reply = Buffer.from(ok);
  reply[0] = 2;
  assert.equal(parseDhcpRequest(reply), null);
  assert.equal(parseDhcpRequest(ok.subarray(0, 200)), null);
  const magic = Buffer.from(ok);
  magic.writeUInt32BE(0, 236);
  assert.equal(parseDhcpRequest(magic), null);
  const truncated = Buffer.concat([ok.subarray(0, 240), Buffer.from([53, 1, 1, 61, 40, 1, 2])]);
  assert.equal(parseDhcpRequest(truncated), null);
  const noType = Buffer.concat([ok.subarray(0, 240), Buffer.from([61, 1, 0x61, 255])]);
  assert.equal(parseDhcpRequest(noType), null);
});

test('Windows IPsec parameters: the first IKE and ESP proposals Windows can express, in the operator\'s order', async () => {
  const { windowsIpsecParams, psQuote } = await import('../../../panel/services/ikev2/windows-profile.ts');
  assert.deepEqual(windowsIpsecParams(IKEV2_DEFAULTS.ike, IKEV2_DEFAULTS.esp), {
    EncryptionMethod: 'AES256', IntegrityCheckMethod: 'SHA1', DHGroup: 'Group2',
    CipherTransformConstants: 'AES256', AuthenticationTransformConstants: 'SHA256128', PfsGroup: 'None',
  });
  assert.deepEqual(windowsIpsecParams('chacha20poly1305-sha512-curve25519-prfsha512,aes256gcm16-sha384-prfsha384-ecp384!', 'chacha20poly1305-sha512,aes256gcm16-ecp384'), {
    EncryptionMethod: 'GCMAES256', IntegrityCheckMethod: 'SHA384', DHGroup: 'ECP384',
    CipherTransformConstants: 'GCMAES256', AuthenticationTransformConstants: 'GCMAES256', PfsGroup: 'ECP384',
  });
  assert.equal(windowsIpsecParams('aes256-sha256-modp2048', 'aes256-sha256-modp2048')?.PfsGroup, 'PFS2048');
  assert.equal(windowsIpsecParams('chacha20poly1305-sha512-curve25519', 'aes256-sha1'), null, 'no IKE proposal Windows has');
  assert.equal(windowsIpsecParams('aes256-sha1-modp1024', 'chacha20poly1305-sha512'), null, 'no ESP proposal Windows has');
  assert.equal(psQuote("it's"), "'it''s'");
});
