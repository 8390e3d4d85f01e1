// keep_alive above wg's 65535 is answered as applied; an interface name held by another daemon is `Interface already in use`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedDriver } from '../../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { E } from '../../../panel/http/errors.ts';
import { makePanel } from './panel-fixture.ts';

test('keep_alive: 0-2147483647 accepted; above 65535 it is stored, answered and handed to clients as 65535', async () => {
  const p = await makePanel();
  try {
    const made = await p.ok('POST', '/wireguard', { name: 's', keep_alive: '2147483647' });
    assert.equal(made.keep_alive, 65535);
    assert.equal((await p.ok('GET', '/wireguard/s')).keep_alive, 65535);
    assert.equal((await p.ok('GET', '/wireguard')).s.keep_alive, 65535);
    await p.ok('POST', '/account', { wg_name: 's', name: 'a', allowed_IPs: '10.0.1.2' });
    assert.match(await p.ok('GET', '/account/a/config_text'), /^PersistentKeepalive = 65535$/m);
    assert.equal((await p.ok('PUT', '/wireguard/s', { keep_alive: '65536' })).keep_alive, 65535);
    assert.equal((await p.ok('PUT', '/wireguard/s', { keep_alive: '65534' })).keep_alive, 65534);
    assert.match(await p.ok('GET', '/account/a/config_text'), /^PersistentKeepalive = 65534$/m);
  } finally {
    await p.close();
  }
});

test('an interface name a live daemon elsewhere holds answers Interface already in use and leaves nothing behind', async () => {
  const driver = new SimulatedDriver({ heldInterfaces: ['wg7'] });
  const p = await makePanel({ driver });
  try {
    const answer = await p.call('POST', '/wireguard', { name: 'held', interface_name: 'wg7' });
    assert.equal(answer.status, 409);
    assert.deepEqual(answer.body, { error: E.INTERFACE_IN_USE, msg: '', status: 'error' });
    assert.deepEqual(await p.ok('GET', '/wireguard'), {});
    assert.deepEqual(await driver.listInterfaces(), []);
    // The name stays free in the store: another name works, and the held one is refused again (not "in use" by us).
    await p.ok('POST', '/wireguard', { name: 'free', interface_name: 'wg8' });
    assert.equal((await p.call('POST', '/wireguard', { name: 'held', interface_name: 'wg7' })).body.error, E.INTERFACE_IN_USE);
  } finally {
    await p.close();
  }
});
