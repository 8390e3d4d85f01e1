// The one-time-link bound's ledger on a driven clock: one claim at a time (a claim left by a stopped process lapses),
// at most `limit` per window, the wait until the oldest leaves the window, services counted apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../../shared/clock.ts';
import { LinkIssueLog, type LinkTables } from '../../../module/modules/Product/VpnProduct/link-bound.ts';
import { vpnProductManifest } from '../../../module/modules/Product/VpnProduct/manifest.ts';
import { openModuleStore } from '../../helpers/module-store.ts';

async function log() {
  const { store } = await openModuleStore<LinkTables>('Product', 'VpnProduct', vpnProductManifest.migrations!);
  const clock = manualClock(new Date('2026-05-01T12:00:00Z'));
  return { issues: new LinkIssueLog(store, clock), clock };
}

const BOUND = { limit: 3, window_minutes: 15 };

test('one claim at a time; the limit per window; the wait is until the oldest leaves the window', async () => {
  const { issues, clock } = await log();
  const first = await issues.take('svc-a', BOUND);
  assert.ok(first.ok);
  assert.deepEqual((await issues.take('svc-a', BOUND)), { ok: false, busy: true, retryAfterMs: 2_000 }, 'busy while the first is made');
  assert.ok((await issues.take('svc-b', BOUND)).ok, 'another service is counted apart');
  await issues.finish(first.claim);
  for (let i = 0; i < 2; i++) {
    clock.advance(60_000);
    const next = await issues.take('svc-a', BOUND);
    assert.ok(next.ok);
    await issues.finish(next.claim);
  }
  clock.advance(60_000);
  assert.deepEqual((await issues.take('svc-a', BOUND)), { ok: false, busy: false, retryAfterMs: 12 * 60_000 });
  clock.advance(12 * 60_000);
  assert.ok((await issues.take('svc-a', BOUND)).ok, 'the oldest left the window');
});

test('a claim a stopped process never finished lapses after a minute', async () => {
  const { issues, clock } = await log();
  assert.ok((await issues.take('svc-a', BOUND)).ok);
  clock.advance(59_000);
  assert.equal((await issues.take('svc-a', BOUND)).ok, false);
  clock.advance(2_000);
  assert.ok((await issues.take('svc-a', BOUND)).ok);
});
