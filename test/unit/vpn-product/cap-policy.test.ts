// The data-cap state machine: warn once at 80 %, exceed once at 100 % with the plan's action, nothing twice, a new period
// lifts and starts fresh, a raised or removed cap lifts; product fields read into a policy; the period rules.
import assert from 'node:assert/strict';
import { billingCalendar } from '../../../module/platform/platform-reads.ts';
import { test } from 'node:test';
import { capPeriod, countUntil } from '../../../module/modules/Product/VpnProduct/caps/cap-directory.ts';
import { capPolicyOf, capSummary, GB, stepCap, type CapPolicy, type CapState } from '../../../module/modules/Product/VpnProduct/caps/cap-policy.ts';
import { humanBytes } from '../../../module/modules/Product/VpnProduct/caps/cap-view.ts';
import { vpnProductSchema } from '../../../module/modules/Product/VpnProduct/schemas.ts';

const THROTTLE: CapPolicy = { allowance_bytes: 10 * GB, action: 'throttle', throttle_mbit: 2 };
const MARCH = { period_start: '2026-03-10', period_end: '2026-04-10' };

function run(policy: CapPolicy, steps: Array<{ used: number; period?: { period_start: string; period_end: string } }>) {
  let state: CapState | null = null;
  const out: string[][] = [];
  for (const s of steps) {
    const { next, effects } = stepCap(state, policy, { ...(s.period ?? MARCH), used_bytes: s.used });
    state = next;
    out.push(effects.map((e) => (e.kind === 'mail' ? `mail${e.level}` : `${e.kind}:${e.action}`)));
  }
  return { out, state: state! };
}

test('80 % mails once, 100 % mails once and applies the action once; more passes do nothing', () => {
  const { out, state } = run(THROTTLE, [{ used: 1 * GB }, { used: 8 * GB }, { used: 9 * GB }, { used: 10 * GB }, { used: 12 * GB }, { used: 12 * GB }]);
  assert.deepEqual(out, [[], ['mail80'], [], ['mail100', 'apply:throttle'], [], []]);
  assert.deepEqual([state.warned, state.exceeded, state.applied, state.used_bytes], [true, true, 'throttle', 12 * GB]);
});

test('a jump past 100 % mails only the exceeded mail (two mails would say the same twice)', () => {
  const { out } = run({ ...THROTTLE, action: 'suspend' }, [{ used: 0 }, { used: 11 * GB }, { used: 11 * GB }]);
  assert.deepEqual(out, [[], ['mail100', 'apply:suspend'], []]);
});

test('a new period lifts the action in force and starts from its own usage', () => {
  const april = { period_start: '2026-04-10', period_end: '2026-05-10' };
  const { out, state } = run(THROTTLE, [{ used: 10 * GB }, { used: 0, period: april }, { used: 8 * GB, period: april }]);
  assert.deepEqual(out, [['mail100', 'apply:throttle'], ['lift:throttle'], ['mail80']]);
  assert.deepEqual([state.period_start, state.exceeded, state.applied], ['2026-04-10', false, null]);
});

test('usage never goes down within a period (a panel that lost a day does not lift)', () => {
  const { out, state } = run(THROTTLE, [{ used: 10 * GB }, { used: 3 * GB }]);
  assert.deepEqual(out, [['mail100', 'apply:throttle'], []]);
  assert.equal(state.used_bytes, 10 * GB);
});

test('a raised or removed cap lifts the action; a changed action swaps it', () => {
  const first = stepCap(null, THROTTLE, { ...MARCH, used_bytes: 10 * GB }).next;
  assert.deepEqual(stepCap(first, { ...THROTTLE, allowance_bytes: 20 * GB }, { ...MARCH, used_bytes: 10 * GB }).effects, [{ kind: 'lift', action: 'throttle' }]);
  assert.deepEqual(stepCap(first, { ...THROTTLE, allowance_bytes: 0 }, { ...MARCH, used_bytes: 10 * GB }).effects, [{ kind: 'lift', action: 'throttle' }]);
  assert.deepEqual(stepCap(first, { ...THROTTLE, action: 'suspend' }, { ...MARCH, used_bytes: 10 * GB }).effects, [
    { kind: 'lift', action: 'throttle' }, { kind: 'apply', action: 'suspend' },
  ]);
});

test('unlimited: no mails, no action', () => {
  const { out } = run({ ...THROTTLE, allowance_bytes: 0 }, [{ used: 0 }, { used: 500 * GB }]);
  assert.deepEqual(out, [[], []]);
});

test('the product fields: defaults for products saved before caps, checks with error texts', () => {
  const schema = vpnProductSchema(() => ['ams']);
  const old = schema.parse({ server_location: 'ams', plan_type: 'basic', bandwidth: 10, wg_server: '' });
  assert.deepEqual([old.data_cap_gb, old.cap_action, old.cap_throttle_mbit], [0, 'throttle', 1]);
  assert.deepEqual(capPolicyOf(old), { allowance_bytes: 0, action: 'throttle', throttle_mbit: 1 });
  const capped = schema.parse({ server_location: 'ams', plan_type: 'basic', bandwidth: 10, data_cap_gb: '50', cap_action: 'suspend', cap_throttle_mbit: '' });
  assert.deepEqual(capPolicyOf(capped), { allowance_bytes: 50 * GB, action: 'suspend', throttle_mbit: 1 });
  const bad = schema.safeParse({ server_location: 'ams', plan_type: 'basic', bandwidth: 10, data_cap_gb: -1, cap_action: 'slow', cap_throttle_mbit: 0 });
  assert.equal(bad.success, false);
  const messages = Object.fromEntries(bad.error!.issues.map((i) => [i.path.join('.'), i.message]));
  assert.deepEqual(messages, {
    data_cap_gb: 'The data cap gb field must be at least 0.',
    cap_action: 'The selected cap action is invalid.',
    cap_throttle_mbit: 'The cap throttle mbit field must be at least 1.',
  });
});

test('periods: the month of the billing period (anchor kept), overdue keeps the last one, no billing = calendar month', () => {
  assert.deepEqual(capPeriod({ next_due_date: '2026-04-10', anchor_day: 10 }, '2026-03-25', billingCalendar), { start: '2026-03-10', end: '2026-04-10' });
  assert.deepEqual(capPeriod({ next_due_date: '2026-07-10', anchor_day: 10 }, '2026-04-25', billingCalendar), { start: '2026-04-10', end: '2026-05-10' }, 'quarterly paid: monthly slices');
  assert.deepEqual(capPeriod({ next_due_date: '2026-02-28', anchor_day: 31 }, '2026-02-01', billingCalendar), { start: '2026-01-31', end: '2026-02-28' });
  const overdue = capPeriod({ next_due_date: '2026-04-10', anchor_day: 10 }, '2026-04-12', billingCalendar);
  assert.deepEqual(overdue, { start: '2026-03-10', end: '2026-04-10' }, 'no new allowance before the renewal is paid');
  assert.equal(countUntil(overdue, '2026-04-12', billingCalendar), '2026-04-13', 'its usage counts on to today');
  assert.deepEqual(capPeriod({ next_due_date: null, anchor_day: null }, '2026-12-05', billingCalendar), { start: '2026-12-01', end: '2027-01-01' });
});

test('summary and units for people', () => {
  assert.deepEqual(capSummary({ used_bytes: 8.5 * GB, period_end: '2026-04-10', applied: null }, THROTTLE, '2026-04-01'), {
    used_bytes: 8.5 * GB, allowance_bytes: 10 * GB, percent: 85, days_left: 9, period_end: '2026-04-10', applied: null,
  });
  assert.equal(capSummary({ used_bytes: 30 * GB, period_end: '2026-04-10', applied: 'throttle' }, THROTTLE, '2026-04-10').percent, 100);
  assert.deepEqual([humanBytes(0), humanBytes(999), humanBytes(8_500_000_000), humanBytes(123_456_789), humanBytes(2e12)], ['0 B', '999 B', '8.5 GB', '123 MB', '2 TB']);
});
