// GET /account/<name>/traffic_statistics/<YEAR>/<MONTH>: every error text, month shapes, zero days, current and future months.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { E } from '../../../panel/http/errors.ts';
import { makeStatsPanel } from './statistics-fixture.ts';

test('error texts: Account not found, Wrong month setting, Wrong year setting, in that order', async () => {
  const p = await makeStatsPanel();
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    const expect = async (path: string, text: string) => {
      const a = await p.call('GET', path);
      assert.equal(a.body.status, 'error', path);
      assert.equal(a.body.error, text, path);
      assert.equal(a.body.msg, '');
      assert.ok(a.status >= 400 && a.status < 500, `${path}: ${a.status}`);
    };
    await expect('/account/nobody/traffic_statistics/2026/03', E.ACCOUNT_NOT_FOUND);
    await expect('/account/nobody/traffic_statistics/abc/13', E.ACCOUNT_NOT_FOUND);
    for (const month of ['0', '13', '00', 'abc', '1.5', '-1', '+3', '123', '%20', '3a', '99']) {
      await expect(`/account/alice/traffic_statistics/2026/${month}`, E.WRONG_MONTH);
    }
    await expect('/account/alice/traffic_statistics/abc/0', E.WRONG_MONTH);
    for (const year of ['abc', '1969', '2101', '20260', '999', '0', '-2026', '2026.5', '２０２６']) {
      await expect(`/account/alice/traffic_statistics/${encodeURIComponent(year)}/3`, E.WRONG_YEAR);
    }
    assert.equal(E.WRONG_MONTH, 'Wrong month setting');
    assert.equal(E.WRONG_YEAR, 'Wrong year setting');
    assert.equal(E.ACCOUNT_NOT_FOUND, 'Account not found');
    // edges accepted
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/1970/1')).length, 31);
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/2100/12')).length, 0, 'future month: no days yet');
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/2026/1')).length, 31, 'month without leading zero');
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/2026/01')).length, 31, 'month with leading zero');
  } finally {
    await p.close();
  }
});

test('one entry per day: months of 28, 29, 30, 31 days, zero-filled, the current month up to today', async () => {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z' });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    const len = async (y: number, m: number) => (await p.ok('GET', `/account/alice/traffic_statistics/${y}/${m}`)).length;
    assert.equal(await len(2026, 2), 28);
    assert.equal(await len(2024, 2), 29);
    assert.equal(await len(2025, 11), 30);
    assert.equal(await len(2025, 12), 31);
    assert.equal(await len(2026, 3), 15, 'current month up to today');
    assert.equal(await len(2026, 4), 0, 'next month');
    const feb = await p.ok('GET', '/account/alice/traffic_statistics/2026/2');
    assert.deepEqual(feb[0], { account: 'alice', date: '2026-02-01', traffic_download: 0, traffic_upload: 0 });
    assert.equal(feb[27].date, '2026-02-28');
    const march = await p.ok('GET', '/account/alice/traffic_statistics/2026/03');
    assert.deepEqual(march.map((e: any) => e.date).slice(-2), ['2026-03-14', '2026-03-15']);
  } finally {
    await p.close();
  }
});

test('"today" follows the panel time zone', async () => {
  const p = await makeStatsPanel({ start: '2026-03-31T20:00:00Z', timeZone: 'Asia/Tokyo' }); // 2026-04-01 05:00 in Tokyo
  try {
    await p.ok('POST', '/wireguard', { name: 'srv' });
    await p.ok('POST', '/account', { wg_name: 'srv', name: 'alice', allowed_IPs: '10.0.1.2' });
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/2026/4')).length, 1);
    assert.equal((await p.ok('GET', '/account/alice/traffic_statistics/2026/3')).length, 31);
  } finally {
    await p.close();
  }
});
