// Contract suite of the web and module host's store (sessions, admin users, roles, web secrets, login throttle, customer
// accounts, tokens, module logs and versions) on each engine; "two processes" are two stores on one database.
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { manualClock } from '../../shared/clock.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { AdminUsers } from '../../module/platform/services/admin-users.ts';
import { RoleRepository } from '../../module/platform/services/roles.ts';
import { SessionStore } from '../../module/platform/services/sessions.ts';
import { HttpError } from '../../module/platform/errors.ts';
import { webSecret } from '../../module/platform/web/web-secrets.ts';
import { LoginThrottle } from '../../module/platform/web/login-throttle.ts';
import { CustomerQueries } from '../../module/platform/store/query/repositories/customers.ts';
import { ModuleLogRepository } from '../../module/platform/store/query/repositories/module-logs.ts';
import { StoredModuleVersions } from '../../module/platform/store/query/repositories/module-versions.ts';
import { ModuleLogQueries } from '../../module/platform/services/module-log-query.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { syncModuleVersion } from '../../module/contract/versions.ts';
import type { ModuleLogEntry } from '../../module/contract/log.ts';
import type { OpenStore } from './store.contract.ts';

type Clock = ReturnType<typeof manualClock>;
interface Env { store: QueryStore; another(): Promise<QueryStore>; clock: Clock }

async function withStores(t: TestContext, open: OpenStore, body: (env: Env) => Promise<void>): Promise<void> {
  const opened = await open(t);
  if (!opened) return;
  try {
    await body({ store: opened.store, another: () => opened.another(), clock: manualClock(new Date('2026-11-27T10:00:00.000Z')) });
  } finally {
    await opened.close();
  }
}

const POLICY = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000, touchMs: 60_000 };

/** The status of a rejected HttpError (or the error itself when it is another). */
async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpError) return error.statusCode;
    throw error;
  }
  return 0;
}

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`store contract (host): ${engine}`, () => {
    test('sessions: one started on process A is read on B; its end, and the end of all of a person, are seen by the other', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const a = new SessionStore(store, clock, POLICY);
      const b = new SessionStore(await another(), clock, POLICY);
      const id = await a.start('admin', '7');
      assert.equal(await b.read(id, 'admin'), '7');
      assert.equal(await b.read(id, 'customer'), null, 'an admin session opens no client area');
      assert.equal(await b.read('x'.repeat(200), 'admin'), null);
      assert.equal(await b.end(id), true);
      assert.equal(await a.read(id, 'admin'), null, 'logout on B is seen by A');
      const one = await a.start('customer', 'c-1');
      const two = await b.start('customer', 'c-1');
      const other = await a.start('customer', 'c-2');
      assert.equal(await b.endAll('customer', 'c-1'), 2);
      assert.deepEqual([await a.read(one, 'customer'), await a.read(two, 'customer'), await a.read(other, 'customer')], [null, null, 'c-2']);
    }));

    test('sessions: idle and absolute limits; last use written at most once per touch interval', (t) => withStores(t, open, async ({ store, clock }) => {
      const sessions = new SessionStore(store, clock, POLICY);
      const id = await sessions.start('admin', '1');
      clock.advance(POLICY.idleMs - 1);
      assert.equal(await sessions.read(id, 'admin'), '1', 'used just before the idle limit');
      clock.advance(POLICY.idleMs - 1);
      assert.equal(await sessions.read(id, 'admin'), '1', 'the read above counted as use');
      clock.advance(POLICY.idleMs);
      assert.equal(await sessions.read(id, 'admin'), null, 'idle too long');
      const old = await sessions.start('admin', '1');
      for (let spent = 0; spent < POLICY.absoluteMs; spent += POLICY.idleMs / 2) {
        clock.advance(POLICY.idleMs / 2);
        await sessions.read(old, 'admin');
      }
      assert.equal(await sessions.read(old, 'admin'), null, 'too old, used or not');
    }));

    test('sessions: ending all of a person inside a transaction is undone with it', (t) => withStores(t, open, async ({ store, clock }) => {
      const sessions = new SessionStore(store, clock, POLICY);
      const id = await sessions.start('admin', '3');
      await assert.rejects(store.transaction(async (tx) => {
        assert.equal(await sessions.within(tx).endAll('admin', '3'), 1);
        throw new Error('later step failed');
      }), /later step failed/);
      assert.equal(await sessions.read(id, 'admin'), '3');
    }));

    test('admins and roles: create, find case-insensitively, principal with the role keys; a password change ends the sessions on every process', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const roles = new RoleRepository(store, clock);
      const sessions = new SessionStore(store, clock, POLICY);
      const admins = new AdminUsers(store, roles, sessions, clock);
      const ops = await roles.create('Ops', ['Platform-Core-admins', 'Platform-Core-dashboard', 'Platform-Core-admins']);
      assert.deepEqual(ops.permissions, ['Platform-Core-admins', 'Platform-Core-dashboard']);
      assert.equal((await roles.findByName('ADMINISTRATOR'))?.permissions[0], '*', 'the seeded role, any case');
      const ann = await admins.create({ email: 'Ann@Example.com', name: 'Ann', password: 'Ann-Pass-1', role: 'Ops' });
      assert.equal((await admins.findByEmail('ann@example.com'))?.id, ann.id);
      assert.equal(await statusOf(admins.create({ email: 'ANN@example.com', password: 'Ann-Pass-2', role: ops.id })), 422);
      assert.equal((await admins.authenticate('ann@example.com', 'Ann-Pass-1'))?.last_login_at, clock.now().toISOString());
      assert.equal(await admins.authenticate('ann@example.com', 'wrong-pass'), null);
      const principal = (await admins.principal(ann.id))!;
      assert.deepEqual([principal.role.name, principal.hasPermission('Platform-Core-admins'), principal.hasPermission('Platform-Core-billing')], ['Ops', true, false]);
      const onB = new SessionStore(await another(), clock, POLICY);
      const cookie = await sessions.start('admin', String(ann.id));
      await admins.setPassword(ann.id, 'Ann-Pass-9');
      assert.equal(await onB.read(cookie, 'admin'), null);
      assert.equal(await statusOf(admins.setPassword(999, 'Whatever-1')), 404);
      const again = await sessions.start('admin', String(ann.id));
      const root = (await roles.findByName('Administrator'))!;
      assert.equal((await admins.setRole(ann.id, root.id)).role_id, root.id);
      assert.equal(await onB.read(again, 'admin'), null, 'a role change ends the sessions');
      assert.equal(await statusOf(admins.setRole(ann.id, 999)), 422);
      const last = await sessions.start('admin', String(ann.id));
      assert.equal((await admins.delete(ann.id)).email, 'Ann@Example.com');
      assert.deepEqual([await admins.get(ann.id), await admins.principal(ann.id), await onB.read(last, 'admin')], [null, null, null]);
      assert.equal(await statusOf(admins.delete(ann.id)), 404);
      assert.deepEqual((await roles.setPermissions(ops.id, ['Platform-Core-tasks'])).permissions, ['Platform-Core-tasks']);
      assert.equal(await statusOf(roles.setPermissions(999, [])), 404);
      assert.deepEqual((await roles.list()).map((r) => r.name), ['Administrator', 'Ops']);
    }));

    test('roles and admins: two processes creating the same name or address at once, one wins', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const other = await another();
      const results = await Promise.allSettled([new RoleRepository(store, clock).create('Support', []), new RoleRepository(other, clock).create('SUPPORT', [])]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results));
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      assert.equal((rejected.reason as HttpError).statusCode, 422);
      const mk = (s: QueryStore) => new AdminUsers(s, new RoleRepository(s, clock), new SessionStore(s, clock), clock)
        .create({ email: 'twin@example.com', password: 'Twin-Pass-1', role: 'Administrator' });
      const admins = await Promise.allSettled([mk(store), mk(other)]);
      assert.equal(admins.filter((r) => r.status === 'fulfilled').length, 1);
      assert.equal(((admins.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as HttpError).statusCode, 422);
    }));

    test('two processes create web secrets at once: one key', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const box = SecretBox.fromKey(Buffer.alloc(32, 9));
      const other = await another();
      const keys = await Promise.all([webSecret(store, box, clock, 'session'), webSecret(other, box, clock, 'session'), webSecret(store, box, clock, 'cookie')]);
      assert.equal(keys[0].length, 32);
      assert.ok(keys[0].equals(keys[1]), 'both processes sign with the stored key');
      assert.ok(!keys[0].equals(keys[2]), 'each name has its own key');
      assert.ok((await webSecret(other, box, clock, 'session')).equals(keys[0]), 'kept');
      const rows = await store.db.selectFrom('web_secrets').select(['name', 'value_sealed']).orderBy('name').execute();
      assert.deepEqual(rows.map((r) => r.name), ['cookie', 'session']);
      assert.ok(rows.every((r) => SecretBox.isSealed(r.value_sealed)), 'sealed at rest');
    }));

    test('throttle counts across two stores on the same database', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const policy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };
      const a = new LoginThrottle(store, clock, policy);
      const b = new LoginThrottle(await another(), clock, policy);
      for (let i = 0; i < 4; i++) await (i % 2 ? a : b).failed('admin', 'Ann@example.com', `10.0.0.${i}`);
      assert.equal(await a.isLocked('admin', 'ann@example.com', '10.9.9.9'), false, 'four failures lock nothing');
      await b.failed('admin', 'ann@EXAMPLE.com ', '10.0.0.9');
      assert.equal(await a.isLocked('admin', 'ann@example.com', '10.9.9.9'), true, 'the fifth failure, on the other process, locks the address everywhere');
      assert.equal(await b.isLocked('customer', 'ann@example.com', '10.9.9.9'), false, 'admin and customer logins are counted apart');
      assert.equal(await b.isLocked('admin', 'bob@example.com', '10.0.0.1'), false, 'each IP failed once only');
      clock.advance(policy.lockMs);
      assert.equal(await a.isLocked('admin', 'ann@example.com', undefined), false, 'the lock ends');
      // One IP guessing many addresses: five failures from it lock it, whatever the address.
      for (let i = 0; i < 5; i++) await (i % 2 ? a : b).failed('customer', `guess${i}@example.com`, '192.0.2.7');
      assert.equal(await a.isLocked('customer', 'someone@example.com', '192.0.2.7'), true);
      // A success clears the address's failures, never the IP's; failures older than the window are forgotten.
      for (let i = 0; i < 4; i++) await a.failed('customer', 'carol@example.com', `198.51.100.${i}`);
      await b.succeeded('customer', 'Carol@example.com');
      await a.failed('customer', 'carol@example.com', '198.51.100.99');
      assert.equal(await a.isLocked('customer', 'carol@example.com', undefined), false);
      for (let i = 0; i < 4; i++) await a.failed('customer', 'dave@example.com', undefined);
      clock.advance(policy.windowMs);
      await b.failed('customer', 'dave@example.com', undefined);
      assert.equal(await a.isLocked('customer', 'dave@example.com', undefined), false, 'the window slid past the first four');
    }));

    test('customers: two processes creating one address at once, one gets the row', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const other = await another();
      const made = await Promise.all([new CustomerQueries(store, clock).createIfFree({ email: 'eve@example.com' }), new CustomerQueries(other, clock).createIfFree({ email: 'EVE@example.com' })]);
      assert.equal(made.filter(Boolean).length, 1);
      assert.equal((await new CustomerQueries(store, clock).list()).length, 1);
    }));

    test('module logs: written, read newest first by module and level; a write inside a transaction rolls back with it; a received batch is all or nothing', (t) => withStores(t, open, async ({ store, clock }) => {
      const logs = new ModuleLogRepository(store);
      const entry = (action: string, level: ModuleLogEntry['level'] = 'info', context: Record<string, unknown> = {}): ModuleLogEntry => ({
        module_type: 'Product', module_name: 'VpnProduct', action, level, request: { n: 1 }, response: 'success', context, created_at: clock.now().toISOString(),
      });
      void logs.write(entry('first'));
      void logs.write(entry('second', 'error'));
      assert.deepEqual((await logs.read()).map((r) => r.action), ['second', 'first'], 'a read waits for the writes on their way');
      assert.deepEqual((await logs.read({ level: 'error' })).map((r) => [r.action, r.request, r.response]), [['second', { n: 1 }, 'success']]);
      assert.deepEqual(await logs.read({ name: 'Smtp' }), []);
      await assert.rejects(store.transaction(async (tx) => {
        await logs.within(tx).write(entry('inside'));
        throw new Error('status write failed');
      }), /status write failed/);
      await assert.rejects(logs.writeReceived([entry('batch-1'), { ...entry('batch-2'), level: 'loud' as ModuleLogEntry['level'] }]));
      assert.deepEqual((await logs.read()).map((r) => r.action), ['second', 'first'], 'neither the rolled-back entry nor half a batch is stored');
      await logs.writeReceived([entry('remote', 'info', { service_uuid: 's-1', password: 'hunter22' })]);
      assert.deepEqual((await logs.read({ limit: 1 }))[0].context, { service_uuid: 's-1', password: '[redacted]' }, 'scrubbed again on receipt');
      // Entries written while a batch is on its way (many jobs logging at once) go in the next batch, in the order written.
      const first = logs.write(entry('wave-0'));
      const later: Array<Promise<void>> = [];
      for (let i = 1; i <= 250; i++) {
        await Promise.resolve();
        later.push(logs.write(entry(`wave-${i}`)));
      }
      await Promise.all([first, ...later]);
      const waves = (await logs.read({ limit: 251 })).map((r) => r.action).reverse();
      assert.deepEqual(waves, Array.from({ length: 251 }, (_, i) => `wave-${i}`), 'every entry stored once, in the order written');
    }));

    test('module logs: the admin query pages and filters by service, its product and location, and text', (t) => withStores(t, open, async ({ store, clock }) => {
      const products = new ProductQueries(store, clock);
      const ams = await products.create('VpnProduct', { server_location: 'ams' });
      const service = '0a6f8d52-0000-4000-8000-000000000001';
      await store.db.insertInto('services').values({
        uuid: service, product_uuid: ams.uuid, module: 'VpnProduct', service_data: '{}', provision_status: 'active', status_reason: null,
        customer_uuid: null, created_at: clock.now().toISOString(), updated_at: clock.now().toISOString(),
      }).execute();
      const logs = new ModuleLogRepository(store);
      for (let i = 0; i < 5; i++) {
        await logs.write({ module_type: 'Product', module_name: 'VpnProduct', action: `create-${i}`, level: i === 4 ? 'error' : 'info', request: { attempt: i }, response: i === 4 ? 'Error: panel down' : 'success', context: i % 2 ? { service_uuid: service } : {}, created_at: clock.now().toISOString() });
      }
      const query = new ModuleLogQueries(store, () => logs.settled());
      const page = { page: 1, per_page: 2 };
      const all = await query.list({ ...page });
      assert.deepEqual([all.total, all.logs.map((l) => l.action)], [5, ['create-4', 'create-3']]);
      assert.deepEqual((await query.list({ page: 2, per_page: 2 })).logs.map((l) => l.action), ['create-2', 'create-1']);
      assert.deepEqual((await query.list({ ...page, service })).logs.map((l) => l.action), ['create-3', 'create-1']);
      assert.equal((await query.list({ ...page, location: 'ams', status: 'active', product: ams.uuid })).total, 2);
      assert.equal((await query.list({ ...page, location: 'fra' })).total, 0);
      assert.deepEqual((await query.list({ ...page, q: 'panel down' })).logs.map((l) => l.action), ['create-4']);
      assert.deepEqual((await query.list({ ...page, level: 'error', module: 'VpnProduct', type: 'Product' })).total, 1);
      assert.equal((await query.list({ ...page, module: 'Smtp' })).total, 0);
    }));

    test('module versions: a version recorded by another process is the one compared at the next sync', (t) => withStores(t, open, async ({ store, another, clock }) => {
      const a = new StoredModuleVersions(store, clock);
      const b = new StoredModuleVersions(await another(), clock);
      await a.refresh();
      await b.refresh();
      const seen: string[] = [];
      const module = (version: string) => ({ module_type: 'Plugin', module_name: 'Notes', version, update: () => { seen.push(b.installed('Plugin', 'Notes') ?? '-'); return 'success'; } });
      assert.deepEqual(await syncModuleVersion(module('1.0.0'), a), { action: 'installed', to: '1.0.0' });
      assert.equal(b.installed('Plugin', 'Notes'), null, 'B answers from what it loaded');
      assert.deepEqual(await syncModuleVersion(module('1.0.0'), b), { action: 'current', version: '1.0.0' }, 'B refreshes before comparing: no second install');
      assert.deepEqual(await syncModuleVersion(module('1.1.0'), b), { action: 'updated', from: '1.0.0', to: '1.1.0', result: 'success' });
      assert.deepEqual(seen, ['1.0.0'], 'update() read the old version through the store');
      await a.refresh();
      assert.equal(a.installed('Plugin', 'Notes'), '1.1.0');
    }));
  });
}
