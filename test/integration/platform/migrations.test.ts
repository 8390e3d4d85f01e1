// A data directory made by the platform before the versioned migrator (test/fixtures/platform/legacy-v1) upgrades in
// place and keeps its panels, products, services (sealed secrets still open), tasks and module logs.
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { test } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { Platform } from '../../../module/platform/platform.ts';
import { ModuleLogRepository } from '../../../module/platform/store/query/repositories/module-logs.ts';
import { ModuleVersionQueries } from '../../../module/platform/store/query/repositories/module-versions.ts';
import { SecretBox } from '../../../shared/secret-box.ts';
import { openPlatformDb } from '../../../module/platform/store/db.ts';
import { PLATFORM_DB_SCOPES } from '../../../module/platform/store/scopes.ts';
import { appliedMigrations } from '../../../module/platform/store/migrator.ts';
import { ServiceQueries } from '../../../module/platform/store/query/repositories/services.ts';
import { TaskStore } from '../../../module/task/task-store.ts';
import { sqliteQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { ledgerOf } from '../../fixtures/platform/ledger.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

const FIXTURE = new URL('../../fixtures/platform/legacy-v1/', import.meta.url).pathname;

test('a database of the earlier layout upgrades in place and keeps its services, tasks and logs', async () => {
  const dir = tempDir('legacy');
  try {
    cpSync(FIXTURE, dir, { recursive: true });
    const db = openPlatformDb(dir);
    try {
      const ledger = appliedMigrations(db);
      const latest = new Map(PLATFORM_DB_SCOPES.map(([scope, list]) => [scope, Math.max(...list.map((m) => m.version))]));
      for (const [scope, version] of latest) {
        assert.deepEqual(ledger.filter((m) => m.scope === scope).map((m) => m.version), Array.from({ length: version }, (_, i) => i + 1), scope);
      }
      // The platform's steps keep the dates they were first applied with (adopted, not re-run).
      const platformRows = ledger.filter((m) => m.scope === 'platform' && m.version <= 2);
      assert.deepEqual(platformRows.map((m) => m.name), ['initial', 'token-scopes']);
      assert.ok(platformRows.every((m) => m.applied_at.startsWith('2026-11-23T10:34')), JSON.stringify(platformRows));

      const box = SecretBox.open(dir);
      // The panels table stays as it was until VpnProduct's own migration adopts it (next test); its hash still opens.
      const panels = db.prepare('SELECT location, access_hash_sealed FROM panels ORDER BY location').all() as Array<{ location: string; access_hash_sealed: string }>;
      assert.deepEqual(panels.map((p) => p.location), ['ams']);
      assert.ok(box.open(panels[0].access_hash_sealed).length > 0, 'sealed access hash still opens');
      const services = await new ServiceQueries(sqliteQueryStore(db), box).list();
      assert.deepEqual(services.map((s) => [s.service_data.username, s.provision_status]).sort(), [
        ['legacy_one', 'suspended'], ['legacy_three', 'pending'], ['legacy_two', 'completed'],
      ]);
      const one = services.find((s) => s.service_data.username === 'legacy_one')!;
      assert.equal(one.service_data.password, 'Legacy0nePassw0rd', 'sealed service data still opens');
      assert.match(String(one.provision_data.account_name), /^svc_[0-9a-f]{12}$/);

      const tasks = new TaskStore(sqliteQueryStore(db), box);
      const ofOne = (await tasks.list({ tag: `service:${one.uuid}` }));
      assert.deepEqual(ofOne.map((t) => [t.tags.filter((tag) => !tag.startsWith('service:'))[0], t.status]).sort(), [['create', 'completed'], ['suspend', 'completed']]);
      assert.equal((await tasks.list()).length, 3);
      // The task table still takes new records (dedupe pepper kept: a repeat of a finished task is not a duplicate).
      const added = (await tasks.insert({ backend: 'embedded', job: 'ModuleJob', queue: 'default', input: { x: 1 }, tags: ['create', `service:${one.uuid}`], options: { tries: 1, backoff: 0, timeout: 30, maxExceptions: 1 } }));
      assert.equal(added.status, 'pending');

      assert.equal((await new ModuleLogRepository(sqliteQueryStore(db)).read()).length, 7);
      assert.equal(await new ModuleVersionQueries(sqliteQueryStore(db)).installed('Product', 'VpnProduct'), '1.0.0');
    } finally {
      db.close();
    }
    // Opening again applies nothing and changes nothing.
    const again = openPlatformDb(dir);
    try {
      assert.equal(appliedMigrations(again).length, [...PLATFORM_DB_SCOPES].reduce((n, [, list]) => n + list.length, 0));
    } finally {
      again.close();
    }
  } finally {
    removeDir(dir);
  }
});

test('a fresh database gets every scope from version 1 and the same tables as an upgraded one', () => {
  const fresh = tempDir('fresh');
  const legacy = tempDir('legacy');
  try {
    cpSync(FIXTURE, legacy, { recursive: true });
    const schema = (dir: string) => {
      const db = openPlatformDb(dir);
      try {
        return db.prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
      } finally {
        db.close();
      }
    };
    assert.deepEqual(schema(fresh), schema(legacy));
  } finally {
    removeDir(fresh);
    removeDir(legacy);
  }
});

test('the whole platform opens on the earlier layout: module scopes migrate too (VpnProduct adopts the panels table)', async () => {
  const dir = tempDir('legacy-platform');
  try {
    cpSync(FIXTURE, dir, { recursive: true });
    const platform = await Platform.open({ dataDir: dir, logger: pino({ level: 'silent' }) });
    try {
      const scopes = new Set((await ledgerOf(platform.store)).map((m) => m.scope));
      assert.ok(scopes.has('module:Product/VpnProduct'), [...scopes].join(', '));
      const panels = (await sql<{ location: string }>`SELECT location FROM vpn_product_panels`.execute(platform.store.db)).rows;
      assert.deepEqual(panels.map((p) => p.location), ['ams']);
      assert.deepEqual((await platform.services.list()).map((s) => s.provision_status).sort(), ['completed', 'pending', 'suspended']);
      assert.equal((await platform.queue.list()).length, 3);
    } finally {
      await platform.close();
    }
  } finally {
    removeDir(dir);
  }
});
