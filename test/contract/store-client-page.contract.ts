// Contract suite of the client area's joined reads (ClientPageQueries) and of the compiled reads under them, on SQLite
// and PostgreSQL: the session of a cookie digest with its customer, and a service page's service, product, billing
// period and open invoices, each equal to what the repositories read one table at a time.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { ClientPageQueries } from '../../module/platform/store/query/repositories/client-page.ts';
import { CustomerQueries } from '../../module/platform/store/query/repositories/customers.ts';
import { InvoiceQueries } from '../../module/platform/store/query/repositories/invoices.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { ServiceBillingQueries } from '../../module/platform/store/query/repositories/service-billing.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import { withSealedStore, type OpenStore } from './store.contract.ts';

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract (client page reads): ${engine}`, () => {
    test('sessionWithCustomer: the row of a digest with its customer; none for an admin session, a gone account or an unknown digest', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const customer = await new CustomerQueries(store, clock).create({ email: 'ann@example.test', name: 'Ann' });
      const now = clock.now().getTime();
      const session = (digest: string, kind: 'admin' | 'customer', subject: string) =>
        store.db.insertInto('web_sessions').values({ digest, kind, subject, created_at: now, seen_at: now + 1, expires_at: now + 2 }).execute();
      await session('d-ann', 'customer', customer.uuid);
      await session('d-admin', 'admin', customer.uuid);
      await session('d-gone', 'customer', randomUUID());
      const reads = new ClientPageQueries(store, box);

      assert.deepEqual(await reads.sessionWithCustomer('d-ann'), {
        kind: 'customer', subject: customer.uuid, seen_at: now + 1, expires_at: now + 2, customer: { uuid: customer.uuid, email: 'ann@example.test', name: 'Ann' },
      });
      assert.deepEqual(await reads.sessionWithCustomer('d-admin'), { kind: 'admin', subject: customer.uuid, seen_at: now + 1, expires_at: now + 2, customer: null });
      assert.equal((await reads.sessionWithCustomer('d-gone'))?.customer, null);
      assert.equal(await reads.sessionWithCustomer('d-none'), null);
      assert.equal(await reads.sessionWithCustomer("d-ann' or '1'='1"), null, 'the key is bound, never part of the SQL');
    }));

    test('servicePage: service (secrets opened), product, billing period and open invoices oldest due first; null for an unknown service', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const product = await new ProductQueries(store, clock).create('VpnProduct', { server_location: 'ams', plan_type: 'basic' }, randomUUID(), { name: 'Basic' });
      const customer = await new CustomerQueries(store, clock).create({ email: 'bob@example.test' });
      const services = new ServiceQueries(store, box, clock);
      const service = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'bob', password: 'S3cret-pass' } });
      await new CustomerQueries(store, clock).assignService(service.uuid, customer.uuid);
      const reads = new ClientPageQueries(store, box);

      const bare = await reads.servicePage(service.uuid);
      assert.deepEqual(bare?.service, { ...withoutProvisionData(await services.get(service.uuid)), customer_uuid: customer.uuid });
      assert.deepEqual(bare?.service.service_data, { username: 'bob', password: 'S3cret-pass' });
      assert.deepEqual(bare?.product, { uuid: product.uuid, module: 'VpnProduct', name: 'Basic', product_data: product.product_data });
      assert.equal(bare?.billing, null);
      assert.deepEqual(bare?.open_invoices, []);

      const periods = new ServiceBillingQueries(store, clock);
      await periods.create({ service_uuid: service.uuid, billing_cycle: 'monthly', recurring_minor: 500, currency: 'EUR' });
      const invoices = new InvoiceQueries(store, clock);
      const invoice = (due: string, amount: number) => invoices.createInvoice({
        order_uuid: null, customer_uuid: customer.uuid, service_uuid: service.uuid, description: 'Basic (monthly)', amount_minor: amount, currency: 'EUR', due_date: due,
      });
      const later = await invoice('2026-12-20', 700);
      const sooner = await invoice('2026-12-04', 500);
      const paid = await invoice('2026-12-01', 300);
      assert.equal(await invoices.setStatus(paid.uuid, 'paid', ['unpaid']), true);

      const read = await reads.servicePage(service.uuid);
      assert.deepEqual(read?.billing, await periods.get(service.uuid));
      const open = await invoices.openOfService(service.uuid);
      assert.deepEqual(open.map((i) => i.uuid), [sooner.uuid, later.uuid]);
      assert.deepEqual(read?.open_invoices, open.map((i) => ({ uuid: i.uuid, number: i.number, kind: i.kind, due_date: i.due_date, amount_minor: i.amount_minor, currency: i.currency, status: i.status })));
      assert.deepEqual(read?.service, bare?.service, 'one service however many invoices join');

      assert.equal(await reads.servicePage(randomUUID()), null);
    }));

    test('service data: sealed members opened (also when the stored JSON spells the seal with escapes); data without one read as stored', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const product = await new ProductQueries(store, clock).create('VpnProduct', { server_location: 'ams' }, randomUUID(), { name: 'Basic' });
      const services = new ServiceQueries(store, box, clock);
      const reads = new ClientPageQueries(store, box);
      const plain = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'plain', nested: { a: [1, 'two'] } } });
      assert.deepEqual((await reads.servicePage(plain.uuid))?.service.service_data, { username: 'plain', nested: { a: [1, 'two'] } });
      const sealed = await services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann', password: 'S3cret-pass' } });
      const stored = await store.db.selectFrom('services').select('service_data').where('uuid', '=', sealed.uuid).executeTakeFirstOrThrow();
      assert.ok(stored.service_data.includes('enc:v1:') && !stored.service_data.includes('S3cret-pass'), 'the secret is sealed at rest');
      await store.db.updateTable('services').set({ service_data: stored.service_data.replaceAll('enc:v1:', '\\u0065nc:v1:') }).where('uuid', '=', sealed.uuid).execute();
      assert.deepEqual((await reads.servicePage(sealed.uuid))?.service.service_data, { username: 'ann', password: 'S3cret-pass' });
      assert.deepEqual((await services.get(sealed.uuid))?.service_data, { username: 'ann', password: 'S3cret-pass' });
    }));

    test('changeMark: the same while only reads happen, another after every write (committed or rolled back); none in a transaction or on PostgreSQL', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const reads = new ClientPageQueries(store, box);
      await store.transaction(async (tx) => assert.equal(tx.changeMark(), undefined, 'a transaction\'s store has no mark'));
      if (store.engine === 'postgres') {
        assert.equal(store.changeMark(), undefined);
        return;
      }
      const start = store.changeMark();
      assert.equal(typeof start, 'string');
      await reads.servicePage(randomUUID());
      await reads.sessionWithCustomer('d-none');
      await store.db.selectFrom('services').selectAll().execute();
      assert.equal(store.changeMark(), start, 'reads leave the mark as it was');
      await new CustomerQueries(store, clock).create({ email: 'mark@example.test' });
      const written = store.changeMark();
      assert.notEqual(written, start, 'a write');
      await assert.rejects(store.transaction(async (tx) => {
        await new CustomerQueries(tx, clock).create({ email: 'gone@example.test' });
        throw new Error('roll back');
      }));
      assert.notEqual(store.changeMark(), written, 'a rolled-back write moves it too (never back to a mark seen before)');
    }));

    test('sessionWithCustomer is kept while the store is unchanged and read again after any write', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const customer = await new CustomerQueries(store, clock).create({ email: 'kept@example.test', name: 'Kept' });
      const now = clock.now().getTime();
      await store.db.insertInto('web_sessions').values({ digest: 'd-kept', kind: 'customer', subject: customer.uuid, created_at: now, seen_at: now, expires_at: now + 10 }).execute();
      const reads = new ClientPageQueries(store, box);
      const first = await reads.sessionWithCustomer('d-kept');
      assert.equal(first?.seen_at, now);
      assert.ok(Object.isFrozen(first) && Object.isFrozen(first?.customer), 'a kept row is shared: frozen');
      await store.db.updateTable('web_sessions').set({ seen_at: now + 5 }).where('digest', '=', 'd-kept').execute();
      assert.equal((await reads.sessionWithCustomer('d-kept'))?.seen_at, now + 5);
      await store.db.updateTable('customers').set({ email: 'renamed@example.test' }).where('uuid', '=', customer.uuid).execute();
      assert.equal((await reads.sessionWithCustomer('d-kept'))?.customer?.email, 'renamed@example.test');
      await store.db.deleteFrom('web_sessions').where('digest', '=', 'd-kept').execute();
      assert.equal(await reads.sessionWithCustomer('d-kept'), null, 'a session ended is gone at once');
    }));

    test('compiled reads and transactions: a transaction reads its own writes; a read outside never sees them before the commit', (t) => withSealedStore(t, open, async (store, box, clock) => {
      const product = await new ProductQueries(store, clock).create('VpnProduct', { server_location: 'ams' }, randomUUID(), { name: 'Basic' });
      const outside = new ClientPageQueries(store, box);
      let created = '';
      let readOutside: Promise<unknown> = Promise.resolve();
      await assert.rejects(store.transaction(async (tx) => {
        created = (await new ServiceQueries(tx, box, clock).create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'tx' } })).uuid;
        assert.equal((await new ClientPageQueries(tx, box).servicePage(created))?.service.uuid, created, 'the transaction reads its own write');
        assert.equal((await new ServiceQueries(tx, box, clock).get(created))?.uuid, created);
        // Not awaited here: on SQLite the read outside waits for the connection the transaction holds.
        readOutside = outside.servicePage(created);
        throw new Error('roll back');
      }), /roll back/);
      assert.equal(await readOutside, null, 'a read outside the transaction never saw its rolled-back write');
      assert.equal(await outside.servicePage(created), null);
      assert.equal(await new ServiceQueries(store, box, clock).get(created), null);
    }));
  });
}

/** A stored service as the page reads it (provision data is not read). */
function withoutProvisionData<T extends { provision_data: unknown }>(service: T | null): Omit<T, 'provision_data'> {
  assert.ok(service);
  const { provision_data: _unread, ...rest } = service;
  return rest;
}
