// The module_logs store: a remote worker's batch is scrubbed again and written all or nothing (one transaction).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { ModuleLogEntry } from '../../../module/contract/log.ts';
import { ModuleLogStore } from '../../../module/platform/store/repositories/module-logs.ts';

function entry(action: string, extra: Partial<ModuleLogEntry> = {}): ModuleLogEntry {
  return {
    module_type: 'Product', module_name: 'VpnProduct', action, level: 'info',
    request: { username: 'alice', password: 'Sup3rSecretPassw0rd' }, response: 'ok', context: {}, created_at: '2026-11-23T12:00:00.000Z',
    ...extra,
  };
}

test('a received batch lands scrubbed, in order', () => {
  const db = new Database(':memory:');
  const store = new ModuleLogStore(db);
  store.writeReceived([entry('create'), entry('suspend', { response: 'token=abcdef123456' })]);
  const rows = store.read();
  assert.deepEqual(rows.map((r) => r.action), ['suspend', 'create']);
  assert.deepEqual(rows[1].request, { username: 'alice', password: '[redacted]' });
  assert.equal(rows[0].response, 'token=[redacted]');
  assert.ok(!JSON.stringify(db.prepare('SELECT * FROM module_logs').all()).includes('Sup3rSecretPassw0rd'));
  db.close();
});

test('a batch whose one entry cannot be stored leaves nothing of the batch', () => {
  const db = new Database(':memory:');
  const store = new ModuleLogStore(db);
  store.write(entry('before'));
  assert.throws(() => store.writeReceived([entry('one'), entry('two', { level: 'bogus' as ModuleLogEntry['level'] })]), /CHECK constraint/);
  assert.deepEqual(store.read().map((r) => r.action), ['before']);
  db.close();
});
