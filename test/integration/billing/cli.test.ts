// `vpnhost platform billing ...` on a data directory: prices, refund policy, invoice list/show, manual payment (create
// queued), refund, and the usage answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir, vpnhostInProcess } from '../../fixtures/platform/processes.ts';

let dataDir: string;
let product: string;
let invoice: string;
let service: string;
const billing = (...args: string[]) => vpnhostInProcess(['platform', 'billing', ...args, '--data', dataDir], { VPNHOST_LOG_LEVEL: 'silent' });

before(async () => {
  dataDir = tempDir('billing-cli');
  const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  try {
    product = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10 })).uuid;
  } finally {
    await platform.close();
  }
});

after(() => removeDir(dataDir));

test('price set/list and refund-policy', async () => {
  const set = JSON.parse(await billing('price', 'set', product, 'quarterly', '19.90', 'usd'));
  assert.equal(set.amount_minor, 1990);
  assert.equal(set.currency, 'USD');
  assert.equal(await billing('price', 'list', product), `${product}\tquarterly\t19.90\tUSD`);
  assert.deepEqual(JSON.parse(await billing('refund-policy', product, 'suspend')), { product_uuid: product, refund_action: 'suspend' });
  await assert.rejects(billing('price', 'set', product, 'quarterly', '1.999', 'USD'), /at most 2 decimals for USD/);
});

test('invoice list/show, manual payment queues create(), refund', async () => {
  const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  try {
    const order = await platform.billing.order({ customer: { email: 'cli@example.test' }, product_uuid: product, billing_cycle: 'quarterly', service_data: { username: 'cli_user', password: 'Secr3tPassw0rd' } });
    invoice = order.invoice.uuid;
    service = order.service_uuid;
  } finally {
    await platform.close();
  }
  const listed = await billing('invoice', 'list', '--status', 'unpaid');
  assert.match(listed, new RegExp(`^${invoice}\\tINV-\\d{4}-\\d{6}\\tunpaid\\t19\\.90\\tUSD\\t\\d{4}-\\d{2}-\\d{2}$`));
  const paid = JSON.parse(await billing('invoice', 'pay', invoice, '--reference', 'wire 7'));
  assert.equal(paid.status, 'paid');
  assert.equal(paid.transactions[0].external_id, 'wire 7');
  const check = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  try {
    assert.equal((await check.services.get(service))?.provision_status, 'processing', 'create() queued by the payment');
  } finally {
    await check.close();
  }
  const refund = JSON.parse(await billing('refund', paid.transactions[0].uuid, '--amount', '9.90'));
  assert.equal(refund.full, false);
  assert.equal(JSON.parse(await billing('invoice', 'show', invoice)).refunded, '9.90');
});
