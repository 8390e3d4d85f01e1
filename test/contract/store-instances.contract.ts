// Contract of the module host's gateway/channel instances on the platform's query layer, run on SQLite and PostgreSQL:
// `module_data` sealed at rest and opened on read, listing per module in creation order, updates, unknown uuids.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { SecretBox } from '../../shared/secret-box.ts';
import { ModuleInstanceStore } from '../../module/platform/services/module-store.ts';
import { withStore, type OpenStore } from './store.contract.ts';


export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`module instances: ${engine}`, () => {
    test('an instance is stored sealed and read back opened', (t) => withStore(t, open, async (store, clock) => {
      const instances = await ModuleInstanceStore.open(store, SecretBox.fromKey(randomBytes(32)), clock);
      const made = await instances.create('Payment', 'Stripe', 'Card', { secret_key: 'sk_test_Sealed123', nested: { a: 1 } });
      assert.deepEqual(made.module_data, { secret_key: 'sk_test_Sealed123', nested: { a: 1 } });
      assert.equal(made.module_type, 'Payment');
      const raw = await sql<{ module_data_sealed: string }>`SELECT module_data_sealed FROM module_instances WHERE uuid = ${made.uuid}`.execute(store.db);
      assert.equal(raw.rows[0].module_data_sealed.includes('sk_test_Sealed123'), false, 'sealed at rest');
      assert.deepEqual(await instances.get(made.uuid), made);
      assert.equal(await instances.get('no-such-instance'), null);
    }));

    test('list answers one module\'s instances without settings, oldest first', (t) => withStore(t, open, async (store, clock) => {
      const instances = await ModuleInstanceStore.open(store, SecretBox.fromKey(randomBytes(32)), clock);
      const first = await instances.create('Payment', 'Stripe', 'First', { k: 1 });
      clock.advance(1000);
      const second = await instances.create('Payment', 'Stripe', 'Second', { k: 2 });
      await instances.create('Notification', 'Smtp', 'Mail', { host: 'x' });
      const listed = await instances.list('Payment', 'Stripe');
      assert.deepEqual(listed.map((i) => i.uuid), [first.uuid, second.uuid]);
      assert.equal('module_data' in listed[0], false);
      assert.equal('module_data_sealed' in listed[0], false);
      assert.deepEqual(await instances.list('Payment', 'Other'), []);
    }));

    test('update replaces label and settings; an unknown uuid answers null', (t) => withStore(t, open, async (store, clock) => {
      const instances = await ModuleInstanceStore.open(store, SecretBox.fromKey(randomBytes(32)), clock);
      const made = await instances.create('Notification', 'Smtp', 'Mail', { host: 'a' });
      clock.advance(5000);
      const changed = await instances.update(made.uuid, 'Relay', { host: 'b' });
      assert.equal(changed?.label, 'Relay');
      assert.deepEqual(changed?.module_data, { host: 'b' });
      assert.notEqual(changed?.updated_at, made.updated_at);
      assert.equal(changed?.created_at, made.created_at);
      assert.equal(await instances.update('no-such-instance', 'x', {}), null);
    }));
  });
}
