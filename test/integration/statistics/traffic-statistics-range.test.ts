// GET /traffic_statistics?from=&to=: every account's stored days of a range in one answer (the platform's data-cap pass
// reads a whole panel with it), days without traffic left out; the range checked with its one error text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OWN } from '../../../panel/http/errors.ts';
import { makeStatsPanel } from './statistics-fixture.ts';

const HOUR = 3_600_000;

test('every account of every server in one answer: stored days of the range, by account and day', async () => {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z' });
  try {
    const one = await p.ok('POST', '/wireguard', { name: 'one' });
    const two = await p.ok('POST', '/wireguard', { name: 'two' });
    const alice = await p.ok('POST', '/account', { wg_name: 'one', name: 'alice', allowed_IPs: '10.0.1.2' });
    const bob = await p.ok('POST', '/account', { wg_name: one.name, name: 'bob', allowed_IPs: '10.0.1.3' });
    const carol = await p.ok('POST', '/account', { wg_name: 'two', name: 'carol', allowed_IPs: two.address.replace(/\.\d+\/\d+$/, '.9') });
    await p.sample();
    p.counters(one.interface_name, alice.public_key, 100, 2_000);
    p.counters(two.interface_name, carol.public_key, 5, 7);
    p.clock.advance(HOUR);
    await p.sample();
    p.clock.set(new Date('2026-03-16T00:00:00Z'));
    await p.sample(); // the midnight sample the scheduler takes
    p.counters(one.interface_name, alice.public_key, 150, 2_500);
    p.clock.advance(HOUR);
    await p.sample();

    const all = await p.ok('GET', '/traffic_statistics?from=2026-03-01');
    assert.deepEqual(all, [
      { account: 'alice', date: '2026-03-15', traffic_download: 2_000, traffic_upload: 100 },
      { account: 'alice', date: '2026-03-16', traffic_download: 500, traffic_upload: 50 },
      { account: 'carol', date: '2026-03-15', traffic_download: 7, traffic_upload: 5 },
    ], `bob (${bob.name}) had no traffic: no rows`);
    assert.deepEqual(await p.ok('GET', '/traffic_statistics?from=2026-03-16&to=2026-03-16'), [all[1]]);
    assert.deepEqual(await p.ok('GET', '/traffic_statistics?from=2026-02-01&to=2026-02-28'), []);
    for (const monthEntry of await p.ok('GET', '/account/alice/traffic_statistics/2026/3')) {
      const row: any = all.find((r: any) => r.account === 'alice' && r.date === monthEntry.date);
      assert.equal(row?.traffic_download ?? 0, monthEntry.traffic_download, 'the same figures as the per-account month');
    }
  } finally {
    await p.close();
  }
});

test('a missing or malformed range answers the one error text', async () => {
  const p = await makeStatsPanel({ start: '2026-03-15T12:00:00Z' });
  try {
    for (const query of ['', '?from=2026-3-1', '?from=2026-03-10&to=2026-03-01', '?from=2026-01-01&to=2026-03-15', '?from=x', '?from=2026-02-30x']) {
      const answer = await p.call('GET', `/traffic_statistics${query}`);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error, OWN.WRONG_DATE_RANGE, query);
    }
    assert.deepEqual(await p.ok('GET', '/traffic_statistics?from=2026-01-14&to=2026-03-15'), [], '62 days are accepted');
  } finally {
    await p.close();
  }
});
