// applySnapshot: every table copied generically (a table added by a later migration too), trigger-kept counters
// right, access hashes and matching traffic baselines kept, and a snapshot breaking foreign keys rolled back.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { snapshotStore } from '../../../panel/services/backups/archive-writer.ts';
import { applySnapshot, prepareSnapshot } from '../../../panel/services/backups/store-restore.ts';
import { loadMigrations, openDatabase, type Db } from '../../../panel/store/db.ts';

const NOW = '2026-03-15T12:00:00Z';

function seed(db: Db, accounts: string[]): void {
  db.prepare(`INSERT INTO wireguard_servers (name, interface_name, listen_port, address, net_first, net_last, external_ip,
    endpoint, dns_1, dns_2, internal_traffic, keep_alive, mtu, allowed_ips, b_download, b_upload, ikev2, ipv6, address_ipv6,
    dns_1_ipv6, dns_2_ipv6, private_key, public_key) VALUES ('srv', 'wg0', 51820, '10.0.1.1/24', 167772416, 167772671, '192.0.2.1',
    '', '', '', 0, 25, 0, '0.0.0.0/0', 0, 0, 0, 0, '', '', '', 'enc:v1:x', 'pub-srv')`).run();
  for (const [i, name] of accounts.entries()) {
    db.prepare(`INSERT INTO accounts (server_id, name, username, password, ip, status, private_key, public_key, mangle, b_download, b_upload, created_at)
      VALUES (1, ?, ?, 'enc:v1:p', ?, 'enable', 'enc:v1:k', ?, ?, 0, 0, ?)`).run(name, `u_${name}`, 167772418 + i, `pub-${name}`, i + 1, NOW);
  }
}

function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-restore-unit-'));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

const count = (db: Db, sql: string) => db.prepare(sql).pluck().get() as number;

test('every table is replaced, a table unknown to the backup code included; counters kept by triggers stay right', () => withDir(async (dir) => {
  const live = openDatabase(join(dir, 'live.db'));
  try {
    live.exec('CREATE TABLE future_feature (id INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL)');
    seed(live, ['alice', 'bob', 'carol']);
    live.exec("INSERT INTO future_feature (value) VALUES ('archived-1'), ('archived-2')");
    live.exec("INSERT INTO access_hashes (digest, ip, comment, created_at) VALUES ('d1', '127.0.0.1', 'old machine', '" + NOW + "')");
    const snap = join(dir, 'snap.db');
    const versions = await snapshotStore(live, snap, true);
    assert.deepEqual(versions, loadMigrations().map((m) => m.version));

    // the live store moves on
    live.exec("DELETE FROM accounts WHERE name = 'bob'");
    live.exec("INSERT INTO future_feature (value) VALUES ('live-only')");
    live.exec("DELETE FROM access_hashes; INSERT INTO access_hashes (digest, ip, comment, created_at) VALUES ('d2', '10.0.0.1', 'this machine', '" + NOW + "')");
    live.exec("INSERT INTO traffic_baseline_sets (source, sampled_at, data) VALUES ('wg:wg0', 7, x'0102')");
    assert.equal(count(live, "SELECT value FROM wireguard_counters WHERE name = 'accounts'"), 2);

    prepareSnapshot(snap, versions);
    applySnapshot(live, snap);
    assert.deepEqual(live.prepare('SELECT name FROM accounts ORDER BY id').pluck().all(), ['alice', 'bob', 'carol']);
    assert.equal(count(live, "SELECT value FROM wireguard_counters WHERE name = 'accounts'"), 3, 'the trigger-kept count is the archive\'s');
    assert.deepEqual(live.prepare('SELECT value FROM future_feature ORDER BY id').pluck().all(), ['archived-1', 'archived-2']);
    assert.equal(count(live, "SELECT seq FROM sqlite_sequence WHERE name = 'future_feature'"), 2);
    assert.deepEqual(live.prepare('SELECT digest FROM access_hashes').pluck().all(), ['d2'], 'this machine\'s access hashes kept');
    assert.deepEqual(live.prepare('SELECT source, sampled_at FROM traffic_baseline_sets').raw(true).all(), [['wg:wg0', 7]],
      'the live baselines kept as they are (the sampler checks id and key per entry)');
    assert.equal(live.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(live.prepare('PRAGMA database_list').all().some((d: any) => d.name === 'snap'), false, 'snapshot detached');
  } finally {
    live.close();
  }
}));

test('a snapshot that breaks foreign keys is refused and the live store stays byte-identical', () => withDir(async (dir) => {
  const live = openDatabase(join(dir, 'live.db'));
  try {
    seed(live, ['alice']);
    const snap = join(dir, 'snap.db');
    const versions = await snapshotStore(live, snap, true);
    const broken = openDatabase(snap);
    broken.pragma('foreign_keys = OFF');
    broken.exec('DELETE FROM wireguard_servers');
    broken.close();
    live.exec("INSERT INTO accounts (server_id, name, username, password, ip, status, private_key, public_key, mangle, b_download, b_upload, created_at) VALUES (1, 'zed', 'u_zed', 'p', 167772500, 'enable', 'k', 'pub-zed', 9, 0, 0, '" + NOW + "')");
    const before = live.serialize();
    prepareSnapshot(snap, versions);
    assert.throws(() => applySnapshot(live, snap), /Unable to delete old configuration: .*foreign keys/);
    assert.ok(before.equals(live.serialize()));
    assert.throws(() => prepareSnapshot(snap, [...versions, 999]), /Error backup reader:/);
  } finally {
    live.close();
  }
}));

test('an archive of an older panel (fewer migrations) is migrated forward in the work folder, then restored', () => withDir(async (dir) => {
  const all = loadMigrations();
  const older = all.filter((m) => m.version <= 2);
  const old = openDatabase(join(dir, 'old.db'), { migrations: older });
  seed(old, ['alice', 'bob']);
  const snap = join(dir, 'snap.db');
  const versions = await snapshotStore(old, snap, true);
  old.close();
  assert.deepEqual(versions, [1, 2]);
  const live = openDatabase(join(dir, 'live.db'));
  try {
    prepareSnapshot(snap, versions);
    applySnapshot(live, snap);
    assert.deepEqual(live.prepare('SELECT name FROM accounts ORDER BY id').pluck().all(), ['alice', 'bob']);
    assert.equal(count(live, "SELECT value FROM wireguard_counters WHERE name = 'accounts'"), 2);
    assert.deepEqual(live.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all(), all.map((m) => m.version));
    // tables of later migrations hold what those migrations seed (e.g. the default firewall policy row)
    const fresh = openDatabase(join(dir, 'fresh.db'));
    try {
      assert.equal(count(live, 'SELECT COUNT(*) FROM firewall_conf'), count(fresh, 'SELECT COUNT(*) FROM firewall_conf'));
    } finally {
      fresh.close();
    }
  } finally {
    live.close();
  }
}));
