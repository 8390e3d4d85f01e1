// GET /wireguard/info, /dump, /available_ips, /peers and /wireguard/online through inject().
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountSchema } from '../../../shared/wire/account.ts';
import {
  AvailableIpsSchema, WireguardDumpSchema, WireguardInfoSchema, WireguardOnlineSchema, WireguardPeersSchema,
} from '../../../shared/wire/wireguard.ts';
import { formatLocalTimestamp } from '../../../panel/services/online.ts';
import { makePanel } from './panel-fixture.ts';

test('info reports the driver versions; dump reports the live port and public key', async () => {
  const p = await makePanel();
  try {
    const info = WireguardInfoSchema.parse(await p.ok('GET', '/wireguard/info'));
    assert.deepEqual(info, await p.driver.versions());
    const server = await p.ok('POST', '/wireguard', { listen_port: '51888' });
    const dump = WireguardDumpSchema.parse(await p.ok('GET', `/wireguard/${server.name}/dump`));
    assert.deepEqual(dump, { port: '51888', public_key: server.public_key });
    assert.equal((await p.call('GET', '/wireguard/nope/dump')).body.error, 'Wireguard server not found');
  } finally {
    await p.close();
  }
});

test('available_ips lists the unused host addresses of the subnet', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 's', address: '10.9.0.1/28' }); // hosts .1-.14
    await p.ok('POST', '/account', { wg_name: 's', allowed_IPs: '10.9.0.2' });
    await p.ok('POST', '/account', { wg_name: 's', allowed_IPs: '10.9.0.14/32', status: 'disable' });
    const free = AvailableIpsSchema.parse(await p.ok('GET', '/wireguard/s/available_ips'));
    assert.deepEqual(free, ['3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13'].map((n) => `10.9.0.${n}`));
    await p.ok('POST', '/account', { wg_name: 's', allowed_IPs: free[0] });
    assert.equal((await p.ok('GET', '/wireguard/s/available_ips')).length, 10);
    assert.equal((await p.call('GET', '/wireguard/x/available_ips')).body.error, 'Wireguard server not found');
  } finally {
    await p.close();
  }
});

test('peers returns the server accounts keyed by name in the Account shape', async () => {
  const p = await makePanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'a' });
    await p.ok('POST', '/wireguard', { name: 'b' });
    const x = await p.ok('POST', '/account', { wg_name: 'a', allowed_IPs: '10.0.1.2', name: 'x' });
    const y = await p.ok('POST', '/account', { wg_name: 'a', allowed_IPs: '10.0.1.3', name: 'y', status: 'disable' });
    await p.ok('POST', '/account', { wg_name: 'b', allowed_IPs: '10.0.2.2', name: 'z' });
    const peers = WireguardPeersSchema.parse(await p.ok('GET', '/wireguard/a/peers'));
    assert.deepEqual(peers, { x, y });
    AccountSchema.parse(peers.x);
    assert.deepEqual(await p.ok('GET', '/wireguard/b/peers'), { z: await p.ok('GET', '/account/z') });
    assert.equal((await p.call('GET', '/wireguard/c/peers')).body.error, 'Wireguard server not found');
  } finally {
    await p.close();
  }
});

test('online lists accounts whose handshake is within wireguard_handshake_uptime', async () => {
  let now = new Date('2025-03-04T10:00:00Z');
  const p = await makePanel({ clock: { now: () => now } });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    const fresh = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'fresh', b_download: '500' });
    const stale = await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'stale' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.4', name: 'never' });
    const t = Math.floor(now.getTime() / 1000);
    p.driver.simulateHandshake('wg0', fresh.public_key, { endpoint: '198.51.100.20:40000', at: t - 30, rx: 1234, tx: 5678 });
    p.driver.simulateHandshake('wg0', stale.public_key, { endpoint: '198.51.100.21:40001', at: t - 181 });
    const online = WireguardOnlineSchema.parse(await p.ok('GET', '/wireguard/online'));
    assert.deepEqual(online, [{
      name: 'fresh', username: fresh.username, wg_name: 'srv', allowed_IPs: '10.0.1.2', b_download: '500', b_upload: '0',
      status: 'enable', endpoint: '198.51.100.20:40000', latest_handshake: formatLocalTimestamp(new Date((t - 30) * 1000)),
      transfer_rx: '1234', transfer_tx: '5678',
    }]);
    assert.match(online[0].latest_handshake, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // A wider uptime brings the stale one in; time passing drops both.
    await p.ok('PUT', '/system/config', { wireguard_handshake_uptime: '300' });
    assert.deepEqual((await p.ok('GET', '/wireguard/online')).map((e: { name: string }) => e.name), ['fresh', 'stale']);
    now = new Date(now.getTime() + 400_000);
    assert.deepEqual(await p.ok('GET', '/wireguard/online'), []);
  } finally {
    await p.close();
  }
});

test('timestamps are formatted YYYY-MM-DD HH:MM:SS with zero padding', () => {
  assert.equal(formatLocalTimestamp(new Date(2024, 0, 5, 3, 4, 9)), '2024-01-05 03:04:09');
});
