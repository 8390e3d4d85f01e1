// GET /wireguard/online after account writes: the public-key index follows creates, edits, disables, deletes and bulk writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makePanel } from '../wireguard/panel-fixture.ts';

interface OnlineEntry { name: string; status: string; b_download: string; allowed_IPs: string; wg_name: string }

test('GET /wireguard/online reflects every account write since the previous listing', async () => {
  const now = new Date();
  const p = await makePanel({ clock: { now: () => now } });
  try {
    await p.ok('POST', '/wireguard', { name: 'a', address: '10.0.1.1/24' });
    await p.ok('POST', '/wireguard', { name: 'b', address: '10.0.2.1/24' });
    const at = Math.floor(now.getTime() / 1000);
    const shake = async (name: string, server: string) => {
      const account = await p.ok<{ public_key: string }>('GET', `/account/${name}`);
      p.driver.simulateHandshake(server, account.public_key, { endpoint: '198.51.100.7:4000', at, rx: 1, tx: 2 });
    };
    const iface = async (server: string) => (await p.ok<{ interface_name: string }>('GET', `/wireguard/${server}`)).interface_name;
    const [ifA, ifB] = [await iface('a'), await iface('b')];
    for (const [name, server, ip] of [['x1', 'a', '10.0.1.2'], ['x2', 'a', '10.0.1.3'], ['y1', 'b', '10.0.2.2']]) {
      await p.ok('POST', '/account', { wg_name: server, name, allowed_IPs: ip });
      await shake(name, server === 'a' ? ifA : ifB);
    }
    const names = async () => (await p.ok<OnlineEntry[]>('GET', '/wireguard/online')).map((e) => `${e.name}@${e.wg_name}:${e.b_download}:${e.allowed_IPs}`).sort();
    assert.deepEqual(await names(), ['x1@a:0:10.0.1.2', 'x2@a:0:10.0.1.3', 'y1@b:0:10.0.2.2']);

    // An edit (bandwidth, address) shows in the next listing.
    await p.ok('PUT', '/account/x1', { b_download: '7', allowed_IPs: '10.0.1.9' });
    await shake('x1', ifA);
    assert.deepEqual(await names(), ['x1@a:7:10.0.1.9', 'x2@a:0:10.0.1.3', 'y1@b:0:10.0.2.2']);

    // A deleted account leaves; a new one with a handshake joins.
    await p.ok('DELETE', '/account/x2');
    await p.ok('POST', '/account', { wg_name: 'b', name: 'y2', allowed_IPs: '10.0.2.3' });
    await shake('y2', ifB);
    assert.deepEqual(await names(), ['x1@a:7:10.0.1.9', 'y1@b:0:10.0.2.2', 'y2@b:0:10.0.2.3']);

    // A bulk write (set_bandwidth of a server) rebuilds the index.
    await p.ok('PUT', '/wireguard/b', { b_download: '5', b_upload: '5' });
    await p.ok('PUT', '/wireguard/b/set_bandwidth');
    assert.deepEqual(await names(), ['x1@a:7:10.0.1.9', 'y1@b:5:10.0.2.2', 'y2@b:5:10.0.2.3']);
  } finally {
    await p.close();
  }
});
