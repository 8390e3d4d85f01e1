// Listings (GET /account, /wireguard/<name>/peers, /wireguard/online): optional limit/offset pages equal slices of the full answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountListSchema } from '../../../shared/wire/account.ts';
import { WireguardOnlineSchema } from '../../../shared/wire/wireguard.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

/** Pages worth checking for a listing of `n`: empty, first, middle, last, past the end, limit 0, offset only. */
function pages(n: number): Array<{ limit?: number; offset?: number }> {
  return [
    { limit: 0 }, { limit: 1 }, { offset: 0 }, { limit: 7, offset: 3 }, { limit: n, offset: 0 }, { limit: n + 5 },
    { offset: n - 1 }, { offset: n }, { offset: n + 10 }, { limit: 3, offset: n - 2 }, { limit: 0, offset: n },
  ];
}

const query = (page: { limit?: number; offset?: number }) =>
  '?' + Object.entries(page).map(([k, v]) => `${k}=${v}`).join('&');

const slice = <T>(all: T[], page: { limit?: number; offset?: number }) =>
  all.slice(page.offset ?? 0, page.limit === undefined ? undefined : (page.offset ?? 0) + page.limit);

async function fill(p: TestPanel, server: string, net: string, n: number, first = 2) {
  const made = [];
  for (let i = 0; i < n; i++) made.push(await p.ok('POST', '/account', { wg_name: server, allowed_IPs: `${net}.${first + i}` }));
  return made;
}

test('GET /account and /wireguard/<name>/peers: every page equals the slice of the full answer; bad values are refused', async () => {
  const p = await makePanel({ licenseAccounts: 500 });
  try {
    await p.ok('POST', '/wireguard', { name: 'a', address: '10.0.1.1/24' });
    await p.ok('POST', '/wireguard', { name: 'b', address: '10.0.2.1/24' });
    await fill(p, 'a', '10.0.1', 20);
    await fill(p, 'b', '10.0.2', 15);
    await fill(p, 'a', '10.0.1', 5, 40);
    // A changed password and a deleted account show in the next listing (the listing's secret memo follows the rows).
    const all0 = AccountListSchema.parse(await p.ok('GET', '/account'));
    await p.ok('PUT', `/account/${all0[3].name}`, { password: 'NewPassword123' });
    await p.ok('DELETE', `/account/${all0[4].name}`);
    const all = AccountListSchema.parse(await p.ok('GET', '/account'));
    assert.equal(all.length, 39);
    assert.equal(all.find((a) => a.name === all0[3].name)!.password, 'NewPassword123');
    assert.ok(!all.some((a) => a.name === all0[4].name));
    // Each entry equals the single-account read (the listing builds rows itself).
    for (const account of all) assert.deepEqual(account, await p.ok('GET', `/account/${account.name}`));
    for (const page of pages(all.length)) {
      assert.deepEqual(await p.ok('GET', `/account${query(page)}`), slice(all, page), JSON.stringify(page));
    }
    const peersA = await p.ok('GET', '/wireguard/a/peers');
    assert.deepEqual(Object.values(peersA), all.filter((a) => a.wg_name === 'a'));
    const listA = Object.entries(peersA);
    for (const page of pages(listA.length)) {
      assert.deepEqual(Object.entries(await p.ok('GET', `/wireguard/a/peers${query(page)}`)), slice(listA, page), JSON.stringify(page));
    }
    for (const bad of ['-1', 'x', '1.5', '', '01', '1e3', '9999999999']) {
      for (const path of [`/account?limit=${bad}`, `/account?offset=${bad}`, `/wireguard/a/peers?limit=${bad}`, `/wireguard/online?offset=${bad}`]) {
        const answer = await p.call('GET', path);
        assert.equal(answer.status, 400, path);
        assert.deepEqual(answer.body, { error: 'Bad request', msg: '', status: 'error' }, path);
      }
    }
    assert.equal((await p.call('GET', '/wireguard/nope/peers?limit=1')).body.error, 'Wireguard server not found');
  } finally {
    await p.close();
  }
});

test('GET /wireguard/online: pages across servers, both the per-key and the bulk lookup path', async () => {
  const now = new Date('2025-03-04T10:00:00Z');
  const p = await makePanel({ licenseAccounts: 500, clock: { now: () => now } });
  try {
    await p.ok('POST', '/wireguard', { name: 'a', address: '10.0.1.1/24' });
    await p.ok('POST', '/wireguard', { name: 'b', address: '10.0.2.1/24' });
    const t = Math.floor(now.getTime() / 1000);
    // Server a: 80 online (above the bulk threshold) and 3 offline; server b: 5 online.
    const a = await fill(p, 'a', '10.0.1', 83);
    const b = await fill(p, 'b', '10.0.2', 5);
    a.slice(0, 80).forEach((acc, i) => p.driver.simulateHandshake('wg0', acc.public_key, { endpoint: `198.51.100.1:${1000 + i}`, at: t - i }));
    b.forEach((acc, i) => p.driver.simulateHandshake('wg1', acc.public_key, { endpoint: `198.51.100.2:${2000 + i}`, at: t - i, rx: i, tx: 2 * i }));
    const all = WireguardOnlineSchema.parse(await p.ok('GET', '/wireguard/online'));
    assert.equal(all.length, 85);
    assert.deepEqual(all.slice(0, 80).map((e) => e.name), a.slice(0, 80).map((x) => x.name));
    assert.deepEqual(all.slice(80).map((e) => [e.name, e.wg_name, e.transfer_tx]), b.map((x, i) => [x.name, 'b', String(2 * i)]));
    for (const page of [...pages(all.length), { limit: 10, offset: 75 }, { offset: 80 }, { limit: 1, offset: 79 }]) {
      assert.deepEqual(await p.ok('GET', `/wireguard/online${query(page)}`), slice(all, page), JSON.stringify(page));
    }
  } finally {
    await p.close();
  }
});
