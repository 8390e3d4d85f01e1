// CustomerRepository on a real platform database: unique e-mail (case-insensitive), updates, service ownership.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openPlatformDb } from '../../../module/platform/store/db.ts';
import { CustomerRepository } from '../../../module/platform/store/repositories/customers.ts';

const dir = mkdtempSync(join(tmpdir(), 'vpnhost-customers-'));
const db = openPlatformDb(dir);
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test('customers: unique e-mail regardless of case, no hash in listings, updates kept', () => {
  const repo = new CustomerRepository(db);
  const alice = repo.create({ email: 'Alice@example.com', name: 'Alice', password_hash: 'h1' });
  assert.throws(() => repo.create({ email: 'alice@EXAMPLE.com' }), /UNIQUE/);
  assert.equal(repo.findByEmail('ALICE@example.com')?.uuid, alice.uuid);
  assert.deepEqual(Object.keys(repo.list()[0]).sort(), ['created_at', 'email', 'name', 'updated_at', 'uuid']);
  assert.equal(repo.update(alice.uuid, { name: 'Alice B' }), true);
  assert.equal(repo.get(alice.uuid)?.name, 'Alice B');
  assert.equal(repo.get(alice.uuid)?.password_hash, 'h1');
  assert.equal(repo.update('missing', { name: 'x' }), false);
});

test('customers: services are linked to their owner and listed per customer', () => {
  const repo = new CustomerRepository(db);
  const bob = repo.create({ email: 'bob@example.com' });
  const now = new Date().toISOString();
  db.prepare("INSERT INTO products (uuid, module, product_data, created_at, updated_at) VALUES ('p1', 'VpnProduct', '{}', ?, ?)").run(now, now);
  for (const uuid of ['s1', 's2']) {
    db.prepare("INSERT INTO services (uuid, product_uuid, module, service_data, provision_status, created_at, updated_at) VALUES (?, 'p1', 'VpnProduct', '{}', 'pending', ?, ?)")
      .run(uuid, now, now);
  }
  assert.equal(repo.ownerOf('s1'), null);
  assert.equal(repo.assignService('s1', bob.uuid), true);
  assert.equal(repo.assignService('nope', bob.uuid), false);
  assert.equal(repo.ownerOf('s1'), bob.uuid);
  assert.deepEqual(repo.serviceUuids(bob.uuid), ['s1']);
  assert.throws(() => repo.assignService('s2', 'no-such-customer'), /FOREIGN KEY/);
});
