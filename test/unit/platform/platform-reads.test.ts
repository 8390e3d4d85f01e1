// The host's read API of platform data for modules (ExtensionEnv.platform) on a real platform database: services with
// their owner and billing state and without secret-named members, customers with their saved-method flag, products,
// invoices, findService's member matches and serviceUuids' listing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SecretBox } from '../../../shared/secret-box.ts';
import { QueryPlatformReads } from '../../../module/platform/platform-reads.ts';
import { sqliteQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { openPlatformDb } from '../../../module/platform/store/db.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { ProductQueries } from '../../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../../module/platform/store/query/repositories/services.ts';

const dir = mkdtempSync(join(tmpdir(), 'vpnhost-platform-reads-'));
const db = openPlatformDb(dir);
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('services, customers and products as modules read them; secrets never handed over', async () => {
  const box = SecretBox.fromKey(randomBytes(32));
  const store = sqliteQueryStore(db);
  const customers = new CustomerQueries(store);
  const alice = await customers.create({ email: 'alice@example.com', name: 'Alice', password_hash: 'h' });
  const product = await new ProductQueries(store).create('VpnProduct', { server_location: 'ams', plan_type: 'basic' });
  const services = new ServiceQueries(store, box);
  const service = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'alice', password: 'pw-secret' } });
  await services.saveProvisionData(service.uuid, { panel: 'p1', account_name: 'alice', access_hash: 'h'.repeat(80), nested: { private_key: 'k', ok: 1 } });
  await customers.assignService(service.uuid, alice.uuid);
  const reads = new QueryPlatformReads(store);

  const view = (await reads.service(service.uuid))!;
  assert.equal(view.customer_uuid, alice.uuid);
  assert.equal(view.module, 'VpnProduct');
  assert.equal(view.billing_state, null, 'no recurring billing recorded');
  assert.deepEqual(view.service_data, { username: 'alice' });
  assert.deepEqual(view.provision_data, { panel: 'p1', account_name: 'alice', nested: { ok: 1 } });
  assert.equal(await reads.service('nope'), null);

  assert.deepEqual(await reads.customer(alice.uuid), { uuid: alice.uuid, email: 'alice@example.com', name: 'Alice', has_payment_method: false });
  assert.deepEqual((await reads.product(product.uuid))?.product_data, { server_location: 'ams', plan_type: 'basic' });
  assert.equal(await reads.invoice('nope'), null);

  const match = { module: 'VpnProduct', live: true, productData: { server_location: 'ams' }, serviceData: { username: 'alice' } };
  assert.equal(await reads.findService(match), service.uuid);
  assert.equal(await reads.findService({ ...match, except: service.uuid }), null, 'the service being edited is not a clash');
  assert.equal(await reads.findService({ ...match, productData: { server_location: 'fra' } }), null);
  await services.writeProvisionStatus(service.uuid, 'terminated');
  assert.equal(await reads.findService(match), null, 'terminated services are not live');
  assert.equal(await reads.findService({ ...match, live: false }), service.uuid);
  await assert.rejects(() => reads.findService({ module: 'VpnProduct', serviceData: { "x') OR 1=1 --": 'y' } }), /not a plain member name/);

  const products = new ProductQueries(store);
  const capped = await products.create('VpnProduct', { data_cap_gb: '50' });
  const uncapped = await products.create('VpnProduct', { data_cap_gb: '' });
  const make = async (productUuid: string, status: 'completed' | 'pending') => {
    const s = await services.create({ product_uuid: productUuid, module_name: 'VpnProduct', service_data: {} });
    await services.writeProvisionStatus(s.uuid, status);
    return s.uuid;
  };
  const live = await make(capped.uuid, 'completed');
  await make(capped.uuid, 'pending');
  await make(uncapped.uuid, 'completed');
  const list = { module: 'VpnProduct', statuses: ['completed', 'suspended'], productNumberAbove: { data_cap_gb: 0 } };
  assert.deepEqual(await reads.serviceUuids(list), [live], 'a capped plan in a listed status; an empty member counts as 0');
  assert.equal((await reads.serviceUuids({ module: 'VpnProduct' })).length, 4);
  assert.deepEqual(await reads.serviceUuids({ ...list, statuses: [] }), []);
  assert.equal((await reads.service(live))?.next_due_date, null);
});
