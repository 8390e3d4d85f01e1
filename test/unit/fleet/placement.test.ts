// Fleet placement: the panel with the most free accounts among those up; never a down or full panel; cache and count.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { choosePanel, NO_FREE_ACCOUNT, NO_PANEL_AT, Placement, type PanelCandidate } from '../../../module/modules/Product/VpnProduct/placement.ts';
import type { SystemStatus } from '../../../module/modules/Product/VpnProduct/wire-schemas.ts';

function status(available: number, text = 'OK'): SystemStatus {
  return { count_accounts: 50 - available, count_accounts_available: available, count_wireguard: 1, license: '2099-12-31T00:00:00+00:00', license_valid: true, status: text, version: '1.0.0' };
}
const up = (name: string, available: number, text?: string): PanelCandidate => ({ name, status: status(available, text) });
const down = (name: string): PanelCandidate => ({ name, status: null, error: 'cannot reach panel: ECONNREFUSED' });

test('the panel with the most free accounts wins; ties go to the first name', () => {
  assert.equal(choosePanel('ams', [up('ams-a', 3), up('ams-b', 40), up('ams-c', 12)]), 'ams-b');
  assert.equal(choosePanel('ams', [up('ams-b', 7), up('ams-a', 7)]), 'ams-a');
});

test('a down panel is never chosen, even when it would have the most room', () => {
  assert.equal(choosePanel('ams', [down('ams-big'), up('ams-small', 1)]), 'ams-small');
  assert.equal(choosePanel('ams', [up('ams-err', 45, 'Error: wireguard-go exited'), up('ams-ok', 2)]), 'ams-ok');
  assert.throws(() => choosePanel('ams', [down('ams-a'), up('ams-b', 9, 'Error: tc failed')]), /no panel at location 'ams' is up \(ams-a: cannot reach panel: ECONNREFUSED; ams-b: Error: tc failed\)/);
});

test('full panels are skipped; all full, or none registered, is an error', () => {
  assert.equal(choosePanel('fra', [up('fra-full', 0), up('fra-room', 1)]), 'fra-room');
  assert.throws(() => choosePanel('fra', [up('fra-a', 0), up('fra-b', 0)]), { message: NO_FREE_ACCOUNT('fra') });
  assert.throws(() => choosePanel('nowhere', []), { message: NO_PANEL_AT('nowhere') });
});

test('Placement reads each panel once per cache window and counts its own picks', async () => {
  let now = 0;
  const reads: string[] = [];
  const free: Record<string, number> = { 'ams-a': 3, 'ams-b': 2 };
  const placement = new Placement(
    {
      panelsAt: async () => ['ams-a', 'ams-b', 'ams-down'],
      status: async (name) => {
        reads.push(name);
        if (name === 'ams-down') throw new Error('cannot reach panel: connect timeout');
        return status(free[name]);
      },
    },
    { now: () => new Date(now) },
    1_000,
  );
  const picks = [];
  for (let i = 0; i < 5; i++) picks.push(await placement.choose('ams'));
  // 3 vs 2 → a (2 left) → tie a/b 2:2 → a (1) → b (1) → tie → a (0) → b (0)
  assert.deepEqual(picks, ['ams-a', 'ams-a', 'ams-b', 'ams-a', 'ams-b']);
  assert.deepEqual(reads.sort(), ['ams-a', 'ams-b', 'ams-down']);
  await assert.rejects(placement.choose('ams'), { message: NO_FREE_ACCOUNT('ams') });
  now = 1_000;
  free['ams-b'] = 10;
  assert.equal(await placement.choose('ams'), 'ams-b', 'a fresh read after the window');
  assert.equal(reads.length, 6);
});

test('an aborted job stops placement instead of counting every panel as down', async () => {
  const controller = new AbortController();
  const placement = new Placement({
    panelsAt: async () => ['ams-a'],
    status: (_name, signal) => new Promise((_resolve, reject) => {
      if (signal?.aborted) reject(new Error('aborted'));
      signal?.addEventListener('abort', () => reject(new Error('aborted')));
    }),
  }, { now: () => new Date(0) });
  const pending = placement.choose('ams', controller.signal);
  controller.abort();
  await assert.rejects(pending, { message: 'aborted' });
});
