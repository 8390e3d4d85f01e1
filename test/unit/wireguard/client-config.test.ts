// Unit tests of the pure wg-quick client renderer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderClientConfig, type ClientConfigInput } from '../../../panel/dataplane/render/client-config.ts';
import { generateKeyPair } from '../../../panel/dataplane/keys.ts';
import { parseWgQuick } from './wg-quick-parse.ts';

const peer = generateKeyPair();
const server = generateKeyPair();
const base: ClientConfigInput = {
  privateKey: peer.privateKey,
  addresses: ['10.0.1.2/32'],
  dns: ['1.1.1.1', '8.8.8.8'],
  mtu: 0,
  serverPublicKey: server.publicKey,
  endpointHost: '203.0.113.1',
  endpointPort: 51820,
  allowedIps: ['0.0.0.0/0'],
  persistentKeepalive: 25,
};

test('renders [Interface] and [Peer] with every field wg-quick needs', () => {
  const text = renderClientConfig(base);
  assert.equal(
    text,
    [
      '[Interface]',
      `PrivateKey = ${peer.privateKey}`,
      'Address = 10.0.1.2/32',
      'DNS = 1.1.1.1, 8.8.8.8',
      '',
      '[Peer]',
      `PublicKey = ${server.publicKey}`,
      'AllowedIPs = 0.0.0.0/0',
      'Endpoint = 203.0.113.1:51820',
      'PersistentKeepalive = 25',
      '',
    ].join('\n'),
  );
  const sections = parseWgQuick(text);
  assert.deepEqual(sections.map((s) => s.section), ['Interface', 'Peer']);
});

test('keepalive 0 and mtu 0 leave their lines out; mtu > 0 adds MTU', () => {
  const text = renderClientConfig({ ...base, persistentKeepalive: 0 });
  assert.doesNotMatch(text, /PersistentKeepalive/);
  assert.doesNotMatch(text, /MTU/);
  assert.match(renderClientConfig({ ...base, mtu: 1380 }), /^MTU = 1380$/m);
});

test('IPv6 endpoint host is bracketed, several addresses and routes are comma-joined', () => {
  const text = renderClientConfig({
    ...base,
    endpointHost: '2001:db8::1',
    addresses: ['10.0.1.2/32', 'fd00::2/128'],
    allowedIps: ['0.0.0.0/0', '::/0'],
  });
  assert.match(text, /^Endpoint = \[2001:db8::1\]:51820$/m);
  assert.match(text, /^Address = 10\.0\.1\.2\/32, fd00::2\/128$/m);
  assert.match(text, /^AllowedIPs = 0\.0\.0\.0\/0, ::\/0$/m);
  assert.match(renderClientConfig({ ...base, endpointHost: 'vpn.example.com' }), /^Endpoint = vpn\.example\.com:51820$/m);
});

test('no PrivateKey line when the client kept its own key; empty DNS entries are skipped', () => {
  const text = renderClientConfig({ ...base, privateKey: '', dns: ['1.1.1.1', ''] });
  assert.doesNotMatch(text, /PrivateKey/);
  assert.match(text, /^DNS = 1\.1\.1\.1$/m);
  assert.doesNotMatch(renderClientConfig({ ...base, dns: ['', ''] }), /DNS/);
});
