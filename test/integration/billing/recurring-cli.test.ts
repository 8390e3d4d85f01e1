// `vpnhost platform billing` for recurring billing on a data directory: settings (global and per product, refusals),
// a dry run then a run (once), runs, a service's billing, its due date moved, cancellation at the period end, its undo,
// and at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { addDays } from '../../../module/platform/services/billing/calendar.ts';
import { removeDir, tempDir, vpnhostInProcess } from '../../fixtures/platform/processes.ts';

let dataDir: string;
let product: string;
let service: string;
const billing = (...args: string[]) => vpnhostInProcess(['platform', 'billing', ...args, '--data', dataDir], { VPNHOST_LOG_LEVEL: 'silent' });
const json = async (...args: string[]) => JSON.parse(await billing(...args));

before(async () => {
  dataDir = tempDir('billing-recurring-cli');
  const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  try {
    product = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10 })).uuid;
    platform.billing.setPrice(product, 'monthly', '4.00', 'EUR');
    const order = await platform.billing.order({ customer: { email: 'cli@example.test' }, product_uuid: product, billing_cycle: 'monthly', service_data: { username: 'cli_user' } });
    service = order.service_uuid;
    await platform.billing.payManually(order.invoice.uuid, 'wire');
  } finally {
    await platform.close();
  }
});

after(() => removeDir(dataDir));

test('settings: shown with their defaults, changed by KEY=VALUE, refused when inconsistent; product overrides', async () => {
  const shown = await json('settings');
  assert.deepEqual([shown.lead_days, shown.suspend_after_days, shown.terminate_after_days, shown.run_every_minutes], [7, 3, 30, 60]);
  const changed = await json('settings', 'lead_days=40', 'reminder_days_before=5,1', 'suspend_after_days=never');
  assert.deepEqual([changed.lead_days, changed.reminder_days_before, changed.suspend_after_days], [40, [1, 5], null]);
  await assert.rejects(billing('settings', 'terminate_after_days=0', 'suspend_after_days=2'), /terminate_after_days must be greater than suspend_after_days/);
  await assert.rejects(billing('settings', 'run_every_minutes=120'), /run_every_minutes/);
  const overrides = await json('product-settings', product, 'suspend_after_days=5');
  assert.deepEqual([overrides.overrides, overrides.effective.suspend_after_days, overrides.effective.lead_days], [{ suspend_after_days: 5 }, 5, 40]);
  assert.deepEqual((await json('product-settings', product, 'suspend_after_days=default')).overrides, {});
});

test('dry run, run (once), runs, service billing, cancel at the period end, undo, cancel now', async () => {
  const billed = await json('service', service);
  assert.equal(billed.state, 'active');
  const dry = await json('run', '--dry-run');
  assert.deepEqual([dry.dry_run, dry.renewals, dry.items.renewals[0].service_uuid, dry.items.renewals[0].period_start], [true, 1, service, billed.next_due_date]);
  const run = await json('run');
  assert.deepEqual([run.renewals, run.dry_run], [1, false]);
  assert.equal((await json('run')).renewals, 0, 'made once');
  const later = addDays(billed.next_due_date, 60);
  const moved = await json('set-due', service, later);
  assert.deepEqual([moved.next_due_date, moved.open_invoices.length], [later, 0], 'moved: the renewal of the old period voided');
  assert.equal((await json('set-due', service, billed.next_due_date)).open_invoices.length, 1, 'moved back: made again');
  const runs = await json('runs');
  assert.deepEqual(runs.slice(0, 2).map((r: any) => [r.trigger, r.summary.renewals]), [['admin', 0], ['admin', 1]]);
  const cancelled = await json('cancel', service);
  assert.equal(cancelled.cancel_at, billed.next_due_date);
  assert.equal(cancelled.open_invoices.length, 0, 'the renewal of the next period is voided');
  assert.equal((await json('undo-cancel', service)).cancel_at, null);
  assert.equal((await json('service', service)).open_invoices.length, 1, 'made again at once');
  assert.equal((await json('cancel', service, '--now')).state, 'cancelled');
  await assert.rejects(billing('cancel', service), /is cancelled/);
  await assert.rejects(billing('service', '00000000-0000-0000-0000-000000000000'), /has no billing period/);
});
