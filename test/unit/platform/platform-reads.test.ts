// The host's read API of platform data for modules (ExtensionEnv.platform) on a real platform database: services with
// their owner and billing state and without secret-named members, customers with their saved-method flag, products,
// invoices, findService's member matches and serviceUuids' listing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SecretBox } from '../../../panel/shared/secret-box.ts';
import { QueryPlatformReads } from '../../../module/platform/platform-reads.ts';
import { sqliteQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { openPlatformDb } from '../../../module/platform/store/db.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { ProductRepository } from '../../../module/platform/store/repositories/products.ts';
import { ServiceStore } from '../../../module/platform/store/repositories/services.ts';

const dir = mkdtempSync(join(tmpdir(), 'vpnhost-platform-reads-'));
const db = openPlatformDb(dir);
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('services, customers and products as modules read them; secrets never handed over', async () => {
  const box = SecretBox.fromKey(randomBytes(32));
  const customers = new CustomerQueries(sqliteQueryStore(db));
  const alice = await customers.create({ email: 'alice@example.com', name: 'Alice', password_hash: 'h' });
  const product = new ProductRepository(db).create('VpnProduct', { server_location: 'ams', plan_type: 'basic' });
  const services = new ServiceStore(db, box);
  const service = services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'alice', password: 'pw-secret' } });
  services.saveProvisionData(service.uuid, { panel: 'p1', account_name: 'alice', access_hash: 'h'.repeat(80), nested: { private_key: 'k', ok: 1 } });
  await customers.assignService(service.uuid, alice.uuid);
  const reads = new QueryPlatformReads(sqliteQueryStore(db));

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
  services.setProvisionStatus(service.uuid, 'terminated');
  assert.equal(await reads.findService(match), null, 'terminated services are not live');
  assert.equal(await reads.findService({ ...match, live: false }), service.uuid);
  await assert.rejects(() => reads.findService({ module: 'VpnProduct', serviceData: { "x') OR 1=1 --": 'y' } }), /not a plain member name/);

  const products = new ProductRepository(db);
  const capped = products.create('VpnProduct', { data_cap_gb: '50' });
  const uncapped = products.create('VpnProduct', { data_cap_gb: '' });
  const make = (productUuid: string, status: 'completed' | 'pending') => {
    const s = services.create({ product_uuid: productUuid, module_name: 'VpnProduct', service_data: {} });
    services.setProvisionStatus(s.uuid, status);
    return s.uuid;
  };
  const live = make(capped.uuid, 'completed');
  make(capped.uuid, 'pending');
  make(uncapped.uuid, 'completed');
  const list = { module: 'VpnProduct', statuses: ['completed', 'suspended'], productNumberAbove: { data_cap_gb: 0 } };
  assert.deepEqual(await reads.serviceUuids(list), [live], 'a capped plan in a listed status; an empty member counts as 0');
  assert.equal((await reads.serviceUuids({ module: 'VpnProduct' })).length, 4);
  assert.deepEqual(await reads.serviceUuids({ ...list, statuses: [] }), []);
  assert.equal((await reads.service(live))?.next_due_date, null);
});
