// An order is one transaction: its pending service, order, invoice and billing period are stored together or not at
// all. A process that dies between them (here: the last step throws) leaves no service behind that would hold the
// customer's username, so the order sent again is placed (the HA system test found the torn order on PostgreSQL).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

test('an order that fails before its commit leaves no service: the same order sent again is placed', async () => {
  const dataDir = tempDir('order-atomic');
  const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  try {
    const product = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10 })).uuid;
    await platform.billing.setPrice(product, 'monthly', '4.99', 'EUR');
    const input = { customer: { email: 'torn@example.test' }, product_uuid: product, billing_cycle: 'monthly' as const, service_data: { username: 'torn_order', password: 'Secr3tPassw0rd' } };
    const periods = (platform.billing as unknown as { deps: { periods: { onOrder: (...args: unknown[]) => Promise<void> } } }).deps.periods;
    const onOrder = periods.onOrder;
    periods.onOrder = async () => { throw new Error('the process died here'); };
    try {
      await assert.rejects(platform.billing.order(input), /the process died here/);
    } finally {
      periods.onOrder = onOrder;
    }
    const placed = await platform.billing.order(input);
    assert.equal(placed.invoice.status, 'unpaid');
    assert.equal((await platform.services.get(placed.service_uuid))?.provision_status, 'pending');
  } finally {
    await platform.close();
    removeDir(dataDir);
  }
});
