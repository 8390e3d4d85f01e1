// The data-plane summary of an archive: the server and its enabled peers, never the private key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderServerSummary } from '../../../panel/services/backups/dataplane-summary.ts';
import type { ServerRow } from '../../../panel/store/repositories/servers.ts';

const row = {
  id: 1, name: 'srv', interface_name: 'wg0', listen_port: 51820, address: '10.0.1.1/24', net_first: 0, net_last: 0,
  external_ip: '192.0.2.1', external_interface: null, endpoint: '', dns_1: '', dns_2: '', internal_traffic: 0, keep_alive: 25,
  mtu: 1380, allowed_ips: '0.0.0.0/0', b_download: 100, b_upload: 50, ikev2: 0, ipv6: 1, address_ipv6: 'fd00:1::1/64',
  dns_1_ipv6: '', dns_2_ipv6: '', private_key: 'enc:v1:sealed-private', public_key: 'SRVPUB=',
} satisfies ServerRow;

test('summary: interface, peers with allowed IPs and marks; no private key, sealed or clear', () => {
  const text = renderServerSummary({
    row,
    peers: [{ publicKey: 'PEER1=', ipv4: '10.0.1.2', ipv6: 'fd00:1::2/128', mark: 7, downloadMbit: 20, uploadMbit: 10 }],
  });
  assert.equal(text, [
    '# srv: data-plane configuration at backup time (read-only copy; restore rebuilds it from panel.db)',
    '[Interface]',
    '# Name = srv',
    'Address = 10.0.1.1/24, fd00:1::1/64',
    'ListenPort = 51820',
    '# PublicKey = SRVPUB=',
    '# PrivateKey: sealed in panel.db',
    'MTU = 1380',
    '# ExternalIP = 192.0.2.1',
    '# Bandwidth (Mbit/s) = down 100, up 50',
    '',
    '[Peer]',
    'PublicKey = PEER1=',
    'AllowedIPs = 10.0.1.2/32, fd00:1::2/128',
    '# Mark = 7, Bandwidth (Mbit/s) = down 20, up 10',
    '',
  ].join('\n'));
  assert.equal(text.includes('sealed-private'), false);
});
