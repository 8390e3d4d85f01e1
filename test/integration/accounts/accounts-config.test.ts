// config_text (wg-quick), config_qr (base64 PNG of the same text) and the live account dump.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import QRCode from 'qrcode';
import { publicKeyFrom } from '../../../panel/dataplane/keys.ts';
import { AccountDumpSchema } from '../../../shared/wire/account.ts';
import { parseWgQuick } from '../../unit/wireguard/wg-quick-parse.ts';
import { makePanel } from '../wireguard/panel-fixture.ts';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test('config_text is a wg-quick client config built from account and server', async () => {
  const p = await makePanel();
  try {
    const server = await p.ok('POST', '/wireguard', { name: 'srv', listen_port: '51999', keep_alive: '21', dns_2: '9.9.9.9' });
    const account = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.8', name: 'c' });
    const text: string = await p.ok('GET', '/account/c/config_text');
    const [iface, peer] = parseWgQuick(text);
    assert.equal(iface.section, 'Interface');
    assert.equal(peer.section, 'Peer');
    assert.equal(iface.entries.get('PrivateKey'), account.private_key);
    assert.equal(publicKeyFrom(iface.entries.get('PrivateKey')!), account.public_key);
    assert.equal(iface.entries.get('Address'), '10.0.1.8/32');
    assert.equal(iface.entries.get('DNS'), '1.1.1.1, 9.9.9.9');
    assert.equal(peer.entries.get('PublicKey'), server.public_key);
    assert.equal(peer.entries.get('Endpoint'), `${server.external_ip}:51999`);
    assert.equal(peer.entries.get('AllowedIPs'), '0.0.0.0/0');
    assert.equal(peer.entries.get('PersistentKeepalive'), '21');
    // Server edits show up: an endpoint name replaces external_ip, keep_alive 0 drops the line, allowed_ips pass on.
    await p.ok('PUT', '/wireguard/srv', { endpoint: 'vpn.example.net', keep_alive: '0', allowed_ips: '10.0.0.0/8,192.168.1.0/24', mtu: '1400' });
    const [iface2, peer2] = parseWgQuick(await p.ok('GET', '/account/c/config_text'));
    assert.equal(peer2.entries.get('Endpoint'), 'vpn.example.net:51999');
    assert.equal(peer2.entries.has('PersistentKeepalive'), false);
    assert.equal(peer2.entries.get('AllowedIPs'), '10.0.0.0/8, 192.168.1.0/24');
    assert.equal(iface2.entries.get('MTU'), '1400');
  } finally {
    await p.close();
  }
});

test('config_qr is a base64 PNG (no data: prefix) of exactly the config_text', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.8', name: 'q' });
    const qr: string = await p.ok('GET', '/account/q/config_qr');
    assert.ok(!qr.startsWith('data:'));
    assert.match(qr, /^[A-Za-z0-9+/]+=*$/);
    const png = Buffer.from(qr, 'base64');
    assert.deepEqual(png.subarray(0, 8), PNG_MAGIC);
    assert.equal(png.subarray(12, 16).toString('ascii'), 'IHDR');
    const width = png.readUInt32BE(16);
    assert.ok(width > 100 && width === png.readUInt32BE(20), 'a square image');
    // QR generation is deterministic: the same text with the same options gives the same image.
    const text: string = await p.ok('GET', '/account/q/config_text');
    const expected = await QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 2 });
    assert.equal(qr, expected.toString('base64'));
  } finally {
    await p.close();
  }
});

test('dump shows the live peer line as strings; a disabled account shows empty counters', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const account = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.8', name: 'd' });
    assert.deepEqual(AccountDumpSchema.parse(await p.ok('GET', '/account/d/dump')), {
      allowed_ips: '10.0.1.8/32', endpoint: '(none)', keepalive: 'off', latest_handshake: '0', transfer_rx: '0', transfer_tx: '0',
    });
    p.driver.simulateHandshake('wg0', account.public_key, { endpoint: '198.51.100.2:5555', at: 1700000000, rx: 42, tx: 4242 });
    assert.deepEqual(await p.ok('GET', '/account/d/dump'), {
      allowed_ips: '10.0.1.8/32', endpoint: '198.51.100.2:5555', keepalive: 'off', latest_handshake: '1700000000',
      transfer_rx: '42', transfer_tx: '4242',
    });
    await p.ok('PUT', '/account/d', { status: 'disable' });
    assert.equal((await p.ok('GET', '/account/d/dump')).endpoint, '(none)');
  } finally {
    await p.close();
  }
});

test('a client that kept its private key gets a config without PrivateKey', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const { generateKeyPair } = await import('../../../panel/dataplane/keys.ts');
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.8', name: 'byo', public_key: generateKeyPair().publicKey });
    const [iface] = parseWgQuick(await p.ok('GET', '/account/byo/config_text'));
    assert.equal(iface.entries.has('PrivateKey'), false);
  } finally {
    await p.close();
  }
});
