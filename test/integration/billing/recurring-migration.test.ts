// Migration 6 `recurring-billing` on a database of the earlier layout (migrations 1-5): invoices keep their rows and
// numbers (kind `order`), and sold services get their billing period by the documented rule — a paid order anchored on
// its payment day, next due date the first cycle boundary on or after the upgrade day (nobody overdue); an unpaid order
// pending; a terminated service terminated; a service without an order no period.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { manualClock } from '../../../shared/clock.ts';
import { migratePlatform } from '../../../module/platform/store/db.ts';
import { runMigrations } from '../../../module/platform/store/migrator.ts';
import { PLATFORM_MIGRATIONS } from '../../../module/platform/store/migrations.ts';

test('services sold before recurring billing get their due date; invoices keep their rows', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const clock = manualClock(new Date('2026-05-20T09:00:00Z'));
  runMigrations(db, 'platform', PLATFORM_MIGRATIONS.filter((m) => m.version <= 5), clock);
  const at = '2026-01-01T00:00:00.000Z';
  db.prepare("INSERT INTO products (uuid, module, product_data, created_at, updated_at) VALUES ('p', 'VpnProduct', '{}', ?, ?)").run(at, at);
  db.prepare("INSERT INTO customers (uuid, email, created_at, updated_at) VALUES ('c', 'c@example.test', ?, ?)").run(at, at);
  const sell = (uuid: string, status: string, cycle: string, invoice: { status: string; paid_at: string | null; amount: number }) => {
    db.prepare("INSERT INTO services (uuid, product_uuid, module, service_data, provision_status, created_at, updated_at, customer_uuid) VALUES (?, 'p', 'VpnProduct', '{}', ?, ?, ?, 'c')")
      .run(uuid, status, at, at);
    db.prepare("INSERT INTO orders (uuid, customer_uuid, product_uuid, service_uuid, billing_cycle, created_at) VALUES (?, 'c', 'p', ?, ?, ?)").run(`o-${uuid}`, uuid, cycle, at);
    db.prepare(`INSERT INTO invoices (uuid, number, order_uuid, customer_uuid, service_uuid, description, amount_minor, currency, due_date, status, paid_at, created_at, updated_at)
      VALUES (?, ?, ?, 'c', ?, 'd', ?, 'EUR', '2026-01-08', ?, ?, ?, ?)`).run(`i-${uuid}`, `INV-2026-${uuid}`, `o-${uuid}`, uuid, invoice.amount, invoice.status, invoice.paid_at, at, at);
  };
  sell('monthly31', 'completed', 'monthly', { status: 'paid', paid_at: '2026-01-31T10:00:00.000Z', amount: 500 });
  sell('quarterly', 'suspended', 'quarterly', { status: 'paid', paid_at: '2025-11-20T10:00:00.000Z', amount: 1200 });
  sell('unpaid', 'pending', 'monthly', { status: 'unpaid', paid_at: null, amount: 500 });
  sell('gone', 'terminated', 'annually', { status: 'paid', paid_at: '2025-06-01T10:00:00.000Z', amount: 4000 });
  db.prepare("INSERT INTO services (uuid, product_uuid, module, service_data, provision_status, created_at, updated_at) VALUES ('admin-made', 'p', 'VpnProduct', '{}', 'completed', ?, ?)").run(at, at);

  migratePlatform(db, clock);
  const billing = (uuid: string) => db.prepare('SELECT state, billing_cycle, recurring_minor, anchor_day, next_due_date, next_period_end FROM service_billing WHERE service_uuid = ?').get(uuid);
  assert.deepEqual(billing('monthly31'), { state: 'active', billing_cycle: 'monthly', recurring_minor: 500, anchor_day: 31, next_due_date: '2026-05-31', next_period_end: '2026-06-30' });
  assert.deepEqual(billing('quarterly'), { state: 'active', billing_cycle: 'quarterly', recurring_minor: 1200, anchor_day: 20, next_due_date: '2026-05-20', next_period_end: '2026-08-20' }, 'a boundary on the upgrade day counts');
  assert.deepEqual(billing('unpaid'), { state: 'pending', billing_cycle: 'monthly', recurring_minor: 500, anchor_day: null, next_due_date: null, next_period_end: null });
  assert.equal((billing('gone') as { state: string }).state, 'terminated');
  assert.equal(billing('admin-made'), undefined, 'a service without an order is not billed');
  const invoices = db.prepare('SELECT uuid, number, kind, status, credit_minor FROM invoices ORDER BY id').all();
  assert.equal(invoices.length, 4);
  assert.deepEqual(invoices[0], { uuid: 'i-monthly31', number: 'INV-2026-monthly31', kind: 'order', status: 'paid', credit_minor: 0 });
  assert.deepEqual(db.pragma('foreign_key_check'), []);
  assert.throws(() => db.prepare(`INSERT INTO transactions (uuid, invoice_uuid, kind, gateway, amount_minor, currency, created_at) VALUES ('t', 'nope', 'payment', 'manual', 1, 'EUR', ?)`).run(at), /FOREIGN KEY/,
    'the invoices table kept being referenced after its rebuild');
});
