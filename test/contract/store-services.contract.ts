// Contract suite of the modules' ServiceRepository over ServiceQueries (`forModules`): reads and data writes on the
// store (secrets sealed at rest), status changes handed to the lifecycle; a service read with its product; and the admin
// services page's filters, on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProvisionStatus } from '../../module/contract/provision-status.ts';
import { ProductQueries, productRecord } from '../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import { withSealedStore, type OpenStore } from './store.contract.ts';


export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract, services for modules: ${engine}`, () => {
    test('forModules: data writes sealed at rest and opened on read; a status change goes to the lifecycle, not to the row', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const product = await new ProductQueries(store, clock).create('VpnProduct', { server_location: 'ams' });
      const services = new ServiceQueries(store, box, clock);
      const { uuid } = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann' } });
      const asked: Array<[string, ProvisionStatus, string | undefined]> = [];
      const repo = services.forModules({ set: async (u, status, reason) => (asked.push([u, status, reason]), true) });

      clock.advance(1_000);
      await repo.saveProvisionData(uuid, { account_name: 'svc_1', password: 'Pr0visionedSecret' });
      await repo.saveServiceData(uuid, { username: 'ann', extra: { token: 'tok_secret_1' } });
      const stored = await store.db.selectFrom('services').select(['service_data', 'provision_data', 'updated_at']).where('uuid', '=', uuid).executeTakeFirstOrThrow();
      assert.equal(stored.provision_data.includes('Pr0visionedSecret'), false, 'provision secret sealed');
      assert.equal(stored.service_data.includes('tok_secret_1'), false, 'nested service secret sealed');
      assert.equal(stored.updated_at, '2026-11-27T10:00:01.000Z');
      const read = await repo.get(uuid);
      assert.deepEqual(read?.provision_data, { account_name: 'svc_1', password: 'Pr0visionedSecret' });
      assert.deepEqual(read?.service_data, { username: 'ann', extra: { token: 'tok_secret_1' } });
      assert.equal(await repo.get('missing'), null);

      await repo.setProvisionStatus(uuid, 'completed', 'by the module');
      assert.deepEqual(asked, [[uuid, 'completed', 'by the module']]);
      assert.equal((await services.get(uuid))?.provision_status, 'pending', 'only the lifecycle writes the status');
    }));

    test('getWithProduct: the service as get reads it (secrets opened) and its product row, in one read', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const products = new ProductQueries(store, clock);
      const product = await products.create('VpnProduct', { server_location: 'ams' }, undefined, { name: 'Ams', position: 2 });
      const services = new ServiceQueries(store, box, clock);
      const { uuid } = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann', password: 'S3rviceSecret' } });
      const both = await services.getWithProduct(uuid);
      assert.deepEqual(both?.service, await services.get(uuid));
      assert.equal(both?.service.service_data.password, 'S3rviceSecret');
      assert.deepEqual(both?.product && productRecord(both.product), await products.get(product.uuid));
      assert.equal(await services.getWithProduct('missing'), null);
    }));

    test('page: filters by status, product, location and text; newest first; total under the filters', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const products = new ProductQueries(store, clock);
      const ams = await products.create('VpnProduct', { server_location: 'ams' });
      const fra = await products.create('VpnProduct', { server_location: 'fra' });
      const services = new ServiceQueries(store, box, clock);
      const made: string[] = [];
      for (const [i, product] of [ams, ams, fra].entries()) {
        clock.advance(1_000);
        made.push((await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: `user_${i}` } })).uuid);
      }
      await services.writeProvisionStatus(made[1], 'failed', 'panel down');
      const page = (q: Parameters<ServiceQueries['page']>[0]) => services.page(q);
      assert.deepEqual(await page({ page: 1, per_page: 10 }), { uuids: [...made].reverse(), total: 3 });
      assert.deepEqual(await page({ page: 2, per_page: 2 }), { uuids: [made[0]], total: 3 });
      assert.deepEqual(await page({ page: 1, per_page: 10, location: 'ams' }), { uuids: [made[1], made[0]], total: 2 });
      assert.deepEqual(await page({ page: 1, per_page: 10, product: fra.uuid }), { uuids: [made[2]], total: 1 });
      assert.deepEqual(await page({ page: 1, per_page: 10, status: 'failed' }), { uuids: [made[1]], total: 1 });
      assert.deepEqual(await page({ page: 1, per_page: 10, q: 'user_2' }), { uuids: [made[2]], total: 1 });
      assert.deepEqual(await page({ page: 1, per_page: 10, q: 'panel' }), { uuids: [made[1]], total: 1 });
      assert.deepEqual(await page({ page: 1, per_page: 10, q: made[0].slice(4, 16) }), { uuids: [made[0]], total: 1 });
    }));
  });
}
