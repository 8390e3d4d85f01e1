// The one-time-link bound's ledger on a driven clock: one claim at a time (a claim left by a stopped process lapses),
// at most `limit` per window, the wait until the oldest leaves the window, services counted apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { manualClock } from '../../../panel/shared/clock.ts';
import { LINK_ISSUES_MIGRATION, LinkIssueLog } from '../../../module/modules/Product/VpnProduct/link-bound.ts';

function log() {
  const db = new Database(':memory:');
  db.exec(LINK_ISSUES_MIGRATION.up as string);
  const clock = manualClock(new Date('2026-05-01T12:00:00Z'));
  return { issues: new LinkIssueLog(db, clock), clock };
}

const BOUND = { limit: 3, window_minutes: 15 };

test('one claim at a time; the limit per window; the wait is until the oldest leaves the window', () => {
  const { issues, clock } = log();
  const first = issues.take('svc-a', BOUND);
  assert.ok(first.ok);
  assert.deepEqual(issues.take('svc-a', BOUND), { ok: false, busy: true, retryAfterMs: 2_000 }, 'busy while the first is made');
  assert.ok(issues.take('svc-b', BOUND).ok, 'another service is counted apart');
  issues.finish(first.id);
  for (let i = 0; i < 2; i++) {
    clock.advance(60_000);
    const next = issues.take('svc-a', BOUND);
    assert.ok(next.ok);
    issues.finish(next.id);
  }
  clock.advance(60_000);
  assert.deepEqual(issues.take('svc-a', BOUND), { ok: false, busy: false, retryAfterMs: 12 * 60_000 });
  clock.advance(12 * 60_000);
  assert.ok(issues.take('svc-a', BOUND).ok, 'the oldest left the window');
});

test('a claim a stopped process never finished lapses after a minute', () => {
  const { issues, clock } = log();
  assert.ok(issues.take('svc-a', BOUND).ok);
  clock.advance(59_000);
  assert.equal(issues.take('svc-a', BOUND).ok, false);
  clock.advance(2_000);
  assert.ok(issues.take('svc-a', BOUND).ok);
});
