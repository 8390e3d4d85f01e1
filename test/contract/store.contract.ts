// Contract suite of the platform's query layer: every repository moved onto it, run against each engine (SQLite in
// the contract tier, PostgreSQL on a private server started by the test file). Each test gets a fresh database.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { sql, type Generated } from 'kysely';
import { manualClock } from '../../shared/clock.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { AdminTokenQueries } from '../../module/platform/store/query/repositories/admin-tokens.ts';
import { CustomerQueries } from '../../module/platform/store/query/repositories/customers.ts';
import { ModuleVersionQueries } from '../../module/platform/store/query/repositories/module-versions.ts';
import { PriceQueries } from '../../module/platform/store/query/repositories/prices.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { moduleStore, StoreScopeError, tablesOfScope } from '../../module/platform/store/query/module-store.ts';
import { PLATFORM_STORE_SCOPES } from '../../module/platform/store/query/query-store.ts';
import type { Migration } from '../../module/platform/store/migrator.ts';

/**
 * A fresh, fully migrated store, or null when the engine's tools are missing (the test is then skipped). `another()`
 * opens a second store on the same database, as a second platform process would (closed by `close`).
 */
export type OpenStore = (t: TestContext) => Promise<{ store: QueryStore; another(): Promise<QueryStore>; close(): Promise<void> } | null>;

export type Clock = ReturnType<typeof manualClock>;

/** Runs `body` on a fresh store (and a fixed clock), closed afterwards; nothing when the engine's tools are missing. */
export async function withStore(t: TestContext, open: OpenStore, body: (store: QueryStore, clock: Clock) => Promise<void>): Promise<void> {
  const opened = await open(t);
  if (!opened) return;
  try {
    await body(opened.store, manualClock(new Date('2026-11-27T10:00:00.000Z')));
  } finally {
    await opened.close();
  }
}

/** Inserts a service of `product` (the link the customer repository reads). */
async function insertService(store: QueryStore, product: string, createdAt: string): Promise<string> {
  const uuid = randomUUID();
  await store.db.insertInto('services').values({
    uuid, product_uuid: product, module: 'VpnProduct', service_data: '{}', provision_status: 'pending', status_reason: null,
    customer_uuid: null, created_at: createdAt, updated_at: createdAt,
  }).execute();
  return uuid;
}

/** A module's own scope as a manifest declares it (SQL written once, for SQLite; PostgreSQL's derived from it). */
const NOTES_SCOPE = 'module:Plugin/ContractNotes';
const NOTES_MIGRATIONS: Migration[] = [
  { version: 1, name: 'notes', up: 'CREATE TABLE contract_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, product_uuid TEXT REFERENCES products(uuid), body TEXT NOT NULL)' },
  { version: 2, name: 'note-tags', up: "ALTER TABLE contract_notes ADD COLUMN tag TEXT NOT NULL DEFAULT ''; CREATE TABLE contract_note_links (note_id INTEGER NOT NULL REFERENCES contract_notes(id), url TEXT NOT NULL)" },
];
interface NotesTables {
  contract_notes: { id: Generated<number>; product_uuid: string | null; body: string; tag: Generated<string> };
  contract_note_links: { note_id: number; url: string };
}

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract: ${engine}`, () => {
    test('products: create, get, update, list in creation order, select by a JSON member', (t) => withStore(t, open, async (store, clock) => {
      const products = new ProductQueries(store, clock);
      const ams = await products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 20 });
      clock.advance(1000);
      const fra = await products.create('VpnProduct', { server_location: 'fra', plan_type: 'premium', bandwidth: 100 });
      assert.deepEqual(ams.product_data, { server_location: 'ams', plan_type: 'basic', bandwidth: 20 });
      assert.equal(ams.created_at, '2026-11-27T10:00:00.000Z');
      assert.deepEqual((await products.list()).map((p) => p.uuid), [ams.uuid, fra.uuid]);
      assert.deepEqual((await products.listAt('fra')).map((p) => p.uuid), [fra.uuid]);
      assert.deepEqual(await products.listAt('nowhere'), []);
      clock.advance(1000);
      assert.equal(await products.update(ams.uuid, { server_location: 'fra', plan_type: 'basic', bandwidth: 30 }), true);
      assert.equal(await products.update(randomUUID(), {}), false);
      const updated = await products.get(ams.uuid);
      assert.equal(updated?.updated_at, '2026-11-27T10:00:02.000Z');
      assert.equal(updated?.created_at, '2026-11-27T10:00:00.000Z');
      assert.deepEqual((await products.listAt('fra')).map((p) => p.uuid), [ams.uuid, fra.uuid]);
      assert.equal(await products.get(randomUUID()), null);
    }));

    test('customers: e-mail unique and matched regardless of case; paging; services linked to their owner', (t) => withStore(t, open, async (store, clock) => {
      const customers = new CustomerQueries(store, clock);
      const dana = await customers.create({ email: 'Dana@Example.test', name: 'Dana', password_hash: 'scrypt$x' });
      await assert.rejects(customers.create({ email: 'dana@example.TEST' }), /unique|UNIQUE/);
      assert.equal((await customers.findByEmail('DANA@example.test'))?.uuid, dana.uuid);
      assert.equal((await customers.get(dana.uuid))?.password_hash, 'scrypt$x');
      assert.equal(await customers.findByEmail('nobody@example.test'), undefined);
      const later: string[] = [];
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        later.push((await customers.create({ email: `c${i}@example.test` })).uuid);
      }
      assert.deepEqual((await customers.list(2, 1)).map((c) => c.uuid), later.slice(0, 2));
      assert.deepEqual((await customers.list()).map((c) => c.uuid), [dana.uuid, ...later]);
      assert.ok(!('password_hash' in (await customers.list())[0]));
      assert.equal(await customers.update(dana.uuid, { name: 'Dana S.', password_hash: null }), true);
      assert.equal((await customers.get(dana.uuid))?.password_hash, null);
      assert.equal((await customers.get(dana.uuid))?.email, 'Dana@Example.test');
      assert.equal(await customers.update(randomUUID(), { name: 'x' }), false);

      const product = (await new ProductQueries(store, clock).create('VpnProduct', {})).uuid;
      const first = await insertService(store, product, '2026-11-27T11:00:00.000Z');
      const second = await insertService(store, product, '2026-11-27T12:00:00.000Z');
      assert.equal(await customers.assignService(second, dana.uuid), true);
      assert.equal(await customers.assignService(first, dana.uuid), true);
      assert.equal(await customers.assignService(randomUUID(), dana.uuid), false);
      assert.deepEqual(await customers.serviceUuids(dana.uuid), [first, second]);
      assert.equal(await customers.ownerOf(first), dana.uuid);
      assert.equal(await customers.assignService(first, null), true);
      assert.equal(await customers.ownerOf(first), null);
      await assert.rejects(customers.assignService(second, randomUUID()), /foreign key|FOREIGN KEY/, 'the owner must exist');
    }));

    test('admin tokens: only the digest is stored, scopes kept apart, ids ascending, last use recorded', (t) => withStore(t, open, async (store, clock) => {
      const admins = new AdminTokenQueries(store, 'admin', clock);
      const workers = new AdminTokenQueries(store, 'worker', clock);
      const a = await admins.create('ops');
      const w = await workers.create('remote');
      assert.match(a.token, /^vpa_[0-9a-f]{64}$/);
      assert.match(w.token, /^vpw_[0-9a-f]{64}$/);
      assert.ok(w.id > a.id);
      const stored = await store.db.selectFrom('admin_tokens').select('digest').execute();
      assert.ok(stored.every((row) => row.digest !== a.token && row.digest !== w.token && /^[0-9a-f]{64}$/.test(row.digest)));
      assert.equal(await admins.verify(a.token), a.id);
      assert.equal(await admins.verify(w.token), null);
      assert.equal(await workers.verify(w.token), w.id);
      assert.equal(await admins.verify(`vpa_${'0'.repeat(64)}`), null);
      const listed = await admins.list();
      assert.deepEqual(listed, [{ id: a.id, comment: 'ops', created_at: '2026-11-27T10:00:00.000Z', last_used_at: '2026-11-27T10:00:00.000Z' }]);
      assert.equal(await workers.delete(a.id), false, 'a worker repository cannot delete an admin token');
      assert.equal(await admins.delete(a.id), true);
      assert.equal(await admins.verify(a.token), null);
      await assert.rejects(store.db.insertInto('admin_tokens').values({ digest: 'x', scope: 'root' as 'admin', created_at: 'now' }).execute(), /check/i);
    }));

    test('prices: set is an upsert, listed by product and cycle; refund policy defaults to terminate', (t) => withStore(t, open, async (store, clock) => {
      const products = new ProductQueries(store, clock);
      const prices = new PriceQueries(store, clock);
      const [p1, p2] = [(await products.create('VpnProduct', {})).uuid, (await products.create('VpnProduct', {})).uuid].sort();
      await prices.set(p2, 'monthly', 900, 'EUR');
      await prices.set(p1, 'monthly', 499, 'EUR');
      await prices.set(p1, 'annually', 4990, 'EUR');
      clock.advance(5000);
      const replaced = await prices.set(p1, 'monthly', 550, 'USD');
      assert.deepEqual(replaced, { product_uuid: p1, billing_cycle: 'monthly', amount_minor: 550, currency: 'USD', created_at: '2026-11-27T10:00:00.000Z', updated_at: '2026-11-27T10:00:05.000Z' });
      assert.deepEqual((await prices.list()).map((p) => [p.product_uuid, p.billing_cycle, p.amount_minor]), [[p1, 'annually', 4990], [p1, 'monthly', 550], [p2, 'monthly', 900]]);
      assert.deepEqual((await prices.list(p2)).map((p) => p.billing_cycle), ['monthly']);
      assert.equal(await prices.delete(p2, 'monthly'), true);
      assert.equal(await prices.delete(p2, 'monthly'), false);
      assert.equal(await prices.get(p2, 'monthly'), null);
      await assert.rejects(prices.set(p1, 'monthly', -1, 'EUR'), /check/i);
      await assert.rejects(prices.set(randomUUID(), 'monthly', 1, 'EUR'), /foreign key|FOREIGN KEY/);
      assert.equal(await prices.refundAction(p1), 'terminate');
      await prices.setRefundAction(p1, 'suspend');
      assert.equal(await prices.refundAction(p1), 'suspend');
      await prices.setRefundAction(p1, 'terminate');
      assert.equal(await prices.refundAction(p1), 'terminate');
    }));

    test('services: secrets sealed at rest and opened on read; status, data and product writes; counts', (t) => withStore(t, open, async (store, clock) => {
      const box = SecretBox.fromKey(Buffer.alloc(32, 7));
      const services = new ServiceQueries(store, box, clock);
      const products = new ProductQueries(store, clock);
      const [basic, premium] = [(await products.create('VpnProduct', {})).uuid, (await products.create('VpnProduct', {})).uuid];
      const one = await services.create({ product_uuid: basic, module_name: 'VpnProduct', service_data: { username: 'ana_1', password: 'S3cretPassw0rd', extra: { api_key: 'k-1' } } });
      assert.equal(one.provision_status, 'pending');
      assert.equal(one.module_name, 'VpnProduct');
      assert.deepEqual(one.service_data, { username: 'ana_1', password: 'S3cretPassw0rd', extra: { api_key: 'k-1' } });
      const raw = await store.db.selectFrom('services').select('service_data').where('uuid', '=', one.uuid).executeTakeFirstOrThrow();
      assert.doesNotMatch(raw.service_data, /S3cretPassw0rd|k-1/);
      assert.match(raw.service_data, /"username":"ana_1"/);
      clock.advance(1000);
      const two = await services.create({ product_uuid: premium, module_name: 'VpnProduct', service_data: { username: 'bo_1' } });
      await services.writeProvisionStatus(one.uuid, 'failed', 'panel unreachable');
      await services.saveProvisionData(one.uuid, { panel: 'ams', private_key: 'pk' });
      await services.setProduct(two.uuid, basic);
      assert.deepEqual(await services.productOf(two.uuid), { product_uuid: basic, module_name: 'VpnProduct' });
      assert.equal(await services.productOf('no-such-service'), null);
      const reread = await services.get(one.uuid);
      assert.equal(reread?.provision_status, 'failed');
      assert.equal(reread?.status_reason, 'panel unreachable');
      assert.deepEqual(reread?.provision_data, { panel: 'ams', private_key: 'pk' });
      assert.deepEqual((await services.list({ product_uuid: basic })).map((s) => s.uuid), [one.uuid, two.uuid]);
      assert.deepEqual((await services.list({ status: 'pending' })).map((s) => s.uuid), [two.uuid]);
      assert.deepEqual(await services.countByStatus(), { failed: 1, pending: 1 });
      await services.saveServiceData(two.uuid, { username: 'bo_2' });
      assert.deepEqual((await services.get(two.uuid))?.service_data, { username: 'bo_2' });
      assert.equal(await services.get(randomUUID()), null);
    }));

    test('services page: newest first, filters by status, product, location and text, total under the filters', (t) => withStore(t, open, async (store, clock) => {
      const box = SecretBox.fromKey(Buffer.alloc(32, 7));
      const services = new ServiceQueries(store, box, clock);
      const products = new ProductQueries(store, clock);
      const ams = (await products.create('VpnProduct', { server_location: 'ams' })).uuid;
      const fra = (await products.create('VpnProduct', { server_location: 'fra' })).uuid;
      const made: string[] = [];
      for (let i = 0; i < 7; i++) {
        clock.advance(1000);
        made.push((await services.create({ product_uuid: i % 2 ? fra : ams, module_name: 'VpnProduct', service_data: { username: `user_${i}` } })).uuid);
      }
      await services.writeProvisionStatus(made[3], 'failed', 'Quota exceeded');
      const newest = [...made].reverse();
      assert.deepEqual(await services.page({ page: 1, per_page: 3 }), { uuids: newest.slice(0, 3), total: 7 });
      assert.deepEqual(await services.page({ page: 3, per_page: 3 }), { uuids: newest.slice(6), total: 7 });
      assert.deepEqual(await services.page({ page: 4, per_page: 3 }), { uuids: [], total: 7 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, location: 'fra' }), { uuids: [made[5], made[3], made[1]], total: 3 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, product: ams, status: 'pending' }), { uuids: [made[6], made[4], made[2], made[0]], total: 4 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, q: 'user_5' }), { uuids: [made[5]], total: 1 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, q: 'Quota' }), { uuids: [made[3]], total: 1 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, q: 'quota' }), { uuids: [], total: 0 }, 'case-sensitive, as instr');
      assert.deepEqual(await services.page({ page: 1, per_page: 10, q: made[2].slice(9, 18) }), { uuids: [made[2]], total: 1 });
      assert.deepEqual(await services.page({ page: 1, per_page: 10, location: 'nowhere' }), { uuids: [], total: 0 });
    }));

    test('module versions: none until recorded, then the latest per module', (t) => withStore(t, open, async (store, clock) => {
      const versions = new ModuleVersionQueries(store, clock);
      assert.equal(await versions.installed('Product', 'VpnProduct'), null);
      await versions.record('Product', 'VpnProduct', '1.0.0');
      await versions.record('Plugin', 'VpnFleet', '0.3.0');
      clock.advance(60_000);
      await versions.record('Product', 'VpnProduct', '1.1.0');
      assert.equal(await versions.installed('Product', 'VpnProduct'), '1.1.0');
      assert.equal(await versions.installed('Plugin', 'VpnFleet'), '0.3.0');
      const row = await store.db.selectFrom('module_versions').selectAll().where('module_name', '=', 'VpnProduct').execute();
      assert.deepEqual(row, [{ module_type: 'Product', module_name: 'VpnProduct', version: '1.1.0', updated_at: '2026-11-27T10:01:00.000Z' }]);
    }));

    test('store.transaction: repositories on the transaction store commit together, a throw undoes all, nesting joins', (t) => withStore(t, open, async (store, clock) => {
      const kept = await store.transaction(async (tx) => {
        assert.equal(tx.inTransaction, true);
        const product = await new ProductQueries(tx, clock).create('VpnProduct', { plan_type: 'basic' });
        await tx.transaction(async (inner) => new PriceQueries(inner, clock).set(product.uuid, 'monthly', 500, 'EUR'));
        return product.uuid;
      });
      assert.equal((await new PriceQueries(store, clock).list(kept)).length, 1);
      await assert.rejects(store.transaction(async (tx) => {
        await new ProductQueries(tx, clock).create('VpnProduct', { plan_type: 'lost' });
        throw new Error('undo');
      }), /undo/);
      assert.deepEqual((await new ProductQueries(store, clock).list()).map((p) => p.uuid), [kept]);
      assert.equal(store.inTransaction, false);
    }));

    test('transactions: all of the writes or none of them', (t) => withStore(t, open, async (store, clock) => {
      const kept = await store.db.transaction().execute(async (trx) => {
        const products = new ProductQueries({ ...store, db: trx }, clock);
        const product = await products.create('VpnProduct', { server_location: 'ams' });
        await new PriceQueries({ ...store, db: trx }, clock).set(product.uuid, 'monthly', 100, 'EUR');
        return product.uuid;
      });
      await assert.rejects(store.db.transaction().execute(async (trx) => {
        await new ProductQueries({ ...store, db: trx }, clock).create('VpnProduct', { server_location: 'fra' });
        await new PriceQueries({ ...store, db: trx }, clock).set(kept, 'monthly', -5, 'EUR'); // CHECK fails
      }), /check/i);
      assert.deepEqual((await new ProductQueries(store, clock).list()).map((p) => p.uuid), [kept]);
      assert.equal((await new PriceQueries(store, clock).get(kept, 'monthly'))?.amount_minor, 100);
    }));

    test('a module store: its own tables migrated from its scope, any other table refused before it runs', (t) => withStore(t, open, async (store, clock) => {
      const tables = tablesOfScope(PLATFORM_STORE_SCOPES, NOTES_SCOPE, NOTES_MIGRATIONS);
      assert.deepEqual(tables, ['contract_note_links', 'contract_notes']);
      assert.deepEqual(await store.migrate([[NOTES_SCOPE, NOTES_MIGRATIONS.slice(0, 1)]]), { [NOTES_SCOPE]: [1] });
      assert.deepEqual(await store.migrate([[NOTES_SCOPE, NOTES_MIGRATIONS]]), { [NOTES_SCOPE]: [2] }, 'an upgrade of a scope in use');
      assert.deepEqual(await store.migrate([[NOTES_SCOPE, NOTES_MIGRATIONS]]), { [NOTES_SCOPE]: [] });
      const notes = moduleStore<NotesTables>(store, NOTES_SCOPE, tables);
      const product = (await new ProductQueries(store, clock).create('VpnProduct', {})).uuid;
      const { id } = await notes.db.insertInto('contract_notes').values({ product_uuid: product, body: 'hello', tag: 'a' }).returning('id').executeTakeFirstOrThrow();
      await notes.db.insertInto('contract_note_links').values({ note_id: id, url: 'https://example.test' }).execute();
      const joined = await notes.db.selectFrom('contract_notes as n').innerJoin('contract_note_links as l', 'l.note_id', 'n.id').select(['n.body', 'n.tag', 'l.url']).execute();
      assert.deepEqual(joined, [{ body: 'hello', tag: 'a', url: 'https://example.test' }]);
      const foreign = notes.db as unknown as typeof store.db;
      await assert.rejects(foreign.selectFrom('customers').selectAll().execute(), (e: unknown) => e instanceof StoreScopeError
        && /module:Plugin\/ContractNotes may not use table customers \(its tables: contract_note_links, contract_notes\)/.test(e.message));
      await assert.rejects(foreign.selectFrom('services as contract_notes').selectAll().execute(), StoreScopeError, 'an alias does not hide a table');
      await assert.rejects(foreign.updateTable('products').set({ module: 'x' }).execute(), StoreScopeError);
      await assert.rejects(sql`DELETE FROM products`.execute(foreign), /runs builder queries only/);
      assert.equal((await new ProductQueries(store, clock).list()).length, 1, 'nothing ran');
      await assert.rejects(notes.db.insertInto('contract_notes').values({ product_uuid: randomUUID(), body: 'x' }).execute(), /foreign key|FOREIGN KEY/);
    }));

    test('migrations: the seeded Administrator role, every platform scope recorded, integers read as numbers', (t) => withStore(t, open, async (store) => {
      const roles = await sql<{ id: number; name: string; permissions: string }>`SELECT id, name, permissions FROM admin_roles`.execute(store.db);
      assert.deepEqual(roles.rows, [{ id: 1, name: 'Administrator', permissions: '["*"]' }]);
      const ledger = await sql<{ scope: string; version: number }>`SELECT scope, version FROM platform_migrations ORDER BY scope, version`.execute(store.db);
      const platform = ledger.rows.filter((r) => r.scope === 'platform').map((r) => r.version);
      assert.deepEqual(platform, platform.map((_, i) => i + 1));
      assert.ok(platform.length >= 6);
      for (const scope of ['tasks', 'module-logs', 'module-versions', 'sessions', 'module-host']) assert.ok(ledger.rows.some((r) => r.scope === scope), scope);
      const count = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM platform_migrations`.execute(store.db);
      assert.equal(count.rows[0].n, ledger.rows.length);
    }));
  });
}

/** `withStore` with a fresh SecretBox, for repositories that seal secrets at rest. */
export function withSealedStore(t: TestContext, open: OpenStore, body: (store: QueryStore, box: SecretBox, clock: Clock) => Promise<void>): Promise<void> {
  return withStore(t, open, (store, clock) => body(store, SecretBox.fromKey(randomBytes(32)), clock));
}
