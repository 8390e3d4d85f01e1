// The sample engine on an in-memory store: lean dump parse, packed baselines, WireGuard and IKE SA deltas, legacy carry-over.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWgTransfers } from '../../../panel/dataplane/render/parse-wg-transfers.ts';
import { baselineSet, packBaselines, unpackBaselines } from '../../../panel/services/statistics/baseline-set.ts';
import { SampleEngine, type SaCounters } from '../../../panel/services/statistics/sample-engine.ts';
import { openDatabase, type Db } from '../../../panel/store/db.ts';
import { BaselineConflictError, TrafficStatisticsRepository } from '../../../panel/store/repositories/traffic-statistics.ts';

const T0 = Date.parse('2026-03-15T12:00:00Z');
const MIN = 60_000;
const K1 = `${'A'.repeat(43)}=`;
const K2 = `${'B'.repeat(43)}=`;
const K3 = `${'C'.repeat(43)}=`;

function store(): { db: Db; repo: TrafficStatisticsRepository; engine: SampleEngine } {
  const db = openDatabase(':memory:');
  db.prepare(`INSERT INTO wireguard_servers (id, name, interface_name, listen_port, address, net_first, net_last, external_ip,
    dns_1, dns_2, allowed_ips, private_key, public_key) VALUES (?, ?, ?, ?, '10.80.0.1/24', 0, 0, '', '', '', '', '', 'x')`).run(1, 'a', 'wg1', 51820);
  db.prepare(`INSERT INTO wireguard_servers (id, name, interface_name, listen_port, address, net_first, net_last, external_ip,
    dns_1, dns_2, allowed_ips, private_key, public_key) VALUES (?, ?, ?, ?, '10.81.0.1/24', 0, 0, '', '', '', '', '', 'y')`).run(2, 'b', 'wg2', 51821);
  const insert = db.prepare(`INSERT INTO accounts (id, name, username, password, status, server_id, ip, mangle, private_key, public_key)
    VALUES (?, ?, ?, '', 'enable', ?, ?, ?, '', ?)`);
  insert.run(1, 'alice', 'alice_u', 1, 2, 1, K1);
  insert.run(2, 'bob', 'bob_u', 1, 3, 2, K2);
  insert.run(3, 'carol', 'carol_u', 2, 4, 3, K3);
  const repo = new TrafficStatisticsRepository(db);
  return { db, repo, engine: new SampleEngine(repo, 'UTC') };
}

const counters = (rows: Array<[string, number, number]>) => ({
  keys: rows.map((r) => r[0]), rx: Float64Array.from(rows, (r) => r[1]), tx: Float64Array.from(rows, (r) => r[2]),
});
const days = (db: Db) => db.prepare('SELECT account_id, day, traffic_download, traffic_upload FROM traffic_statistics ORDER BY account_id, day').raw(true).all();
const sa = (uniqueId: string, username: string, bytesIn: number, bytesOut: number, establishedSeconds: number): SaCounters =>
  ({ uniqueId, username, bytesIn, bytesOut, establishedSeconds });

test('parseWgTransfers: keys and counters in dump order; malformed dumps throw', () => {
  const dump = 'priv\tpub\t51820\toff\n' +
    `${K1}\t(none)\t(none)\t10.0.0.2/32\t0\t100\t200\toff\n` +
    `${K2}\t(none)\t192.0.2.1:5000\t10.0.0.3/32,fd00::3/128\t1700000000\t7\t9\t25\n`;
  const parsed = parseWgTransfers(dump);
  assert.deepEqual(parsed.keys, [K1, K2]);
  assert.deepEqual([...parsed.rx], [100, 7]);
  assert.deepEqual([...parsed.tx], [200, 9]);
  assert.deepEqual(parseWgTransfers('priv\tpub\t51820\toff\n').keys, []);
  assert.throws(() => parseWgTransfers(''), /interface line/);
  assert.throws(() => parseWgTransfers('priv\tpub\t51820\toff\nkey\t1\t2\n'), /peer line/);
  assert.throws(() => parseWgTransfers(`priv\tpub\t51820\toff\n${K1}\t(none)\t(none)\tx\t0\tNaN?\t2\toff\n`), /transfer counters/);
});

test('packed baselines round-trip (also empty)', () => {
  const set = baselineSet(T0, [K1, K2, '17'], Float64Array.of(1, -1, 3), Float64Array.of(0, 2 ** 40, 5), Float64Array.of(9, 8, 7));
  const back = unpackBaselines(packBaselines(set), T0);
  assert.deepEqual(back.keys, set.keys);
  assert.deepEqual([...back.ids], [1, -1, 3]);
  assert.deepEqual([...back.rx], [0, 2 ** 40, 5]);
  assert.deepEqual([...back.tx], [9, 8, 7]);
  assert.equal(back.slot.get('17'), 2);
  assert.deepEqual(unpackBaselines(packBaselines(baselineSet(T0, [], new Float64Array(0), new Float64Array(0), new Float64Array(0))), T0).keys, []);
  assert.throws(() => unpackBaselines(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0]), T0), /unknown format/);
});

test('WireGuard: first sighting whole, growth after, day rows only for moved peers, peers of other servers and strangers ignored', () => {
  const { db, engine } = store();
  const first = engine.sample({ at: T0, dumps: [[1, 'wg1', counters([[K1, 10, 20], [K2, 0, 0], [K3, 5, 5], ['stranger', 1, 1]])]], sas: null });
  assert.deepEqual({ ...first, engineMs: 0 }, { peers: 2, ikeSas: 0, resets: 0, download: 20, upload: 10, engineMs: 0, parked: [] });
  assert.deepEqual(days(db), [[1, '2026-03-15', 20, 10]], 'bob did not move: no row; carol is on server 2');
  const second = engine.sample({ at: T0 + 5 * MIN, dumps: [[1, 'wg1', counters([[K2, 3, 4], [K1, 10, 20]])]], sas: null });
  assert.deepEqual({ ...second, engineMs: 0 }, { peers: 2, ikeSas: 0, resets: 0, download: 4, upload: 3, engineMs: 0, parked: [] });
  assert.deepEqual(days(db), [[1, '2026-03-15', 20, 10], [2, '2026-03-15', 4, 3]]);
  const reset = engine.sample({ at: T0 + 10 * MIN, dumps: [[1, 'wg1', counters([[K1, 1, 2], [K2, 3, 4]])]], sas: null });
  assert.equal(reset.resets, 1);
  assert.deepEqual(days(db)[0], [1, '2026-03-15', 22, 11], 'went backwards: counted whole');
});

test('WireGuard: a missing interface drops its baselines; a restart (new engine) continues from the stored blob; peerLeft; a stale engine is refused', () => {
  const { db, repo, engine } = store();
  engine.sample({ at: T0, dumps: [[1, 'wg1', counters([[K1, 100, 100]])]], sas: null });
  const restarted = new SampleEngine(repo, 'UTC');
  restarted.sample({ at: T0 + MIN, dumps: [[1, 'wg1', counters([[K1, 150, 170]])]], sas: null });
  assert.deepEqual(days(db), [[1, '2026-03-15', 170, 150]], 'nothing lost or counted twice across the restart');
  restarted.peerLeft([1]);
  new SampleEngine(repo, 'UTC').sample({ at: T0 + 2 * MIN, dumps: [[1, 'wg1', counters([[K1, 200, 200]])]], sas: null });
  assert.deepEqual(days(db), [[1, '2026-03-15', 370, 350]], 'after peerLeft the (re-added) peer counts whole');
  // `restarted` holds the baselines of T0 + MIN, another engine wrote since: its write is refused, nothing counted twice
  assert.throws(() => restarted.sample({ at: T0 + 3 * MIN, dumps: [[1, 'wg1', counters([[K1, 260, 260]])]], sas: null }), BaselineConflictError);
  assert.deepEqual(days(db), [[1, '2026-03-15', 370, 350]]);
  // ... and it reloads the store's: the next sample counts from there
  restarted.sample({ at: T0 + 3 * MIN, dumps: [[1, 'wg1', counters([[K1, 260, 260]])]], sas: null });
  assert.deepEqual(days(db), [[1, '2026-03-15', 430, 410]]);
  restarted.sample({ at: T0 + 4 * MIN, dumps: [[1, 'wg1', null]], sas: null });
  assert.equal(db.prepare("SELECT COUNT(*) FROM traffic_baseline_sets WHERE source = 'wg:wg1'").pluck().get(), 0);
});

test('IKEv2: download = bytes out, upload = bytes in; new SA from zero; vanished SA forgotten; an id reused by a younger SA starts anew', () => {
  const { db, engine } = store();
  engine.sample({ at: T0, dumps: [], sas: [sa('1', 'alice_u', 1_000, 5_000, 30), sa('2', 'nobody', 9, 9, 30)] });
  assert.deepEqual(days(db), [[1, '2026-03-15', 5_000, 1_000]]);
  const grown = engine.sample({ at: T0 + 5 * MIN, dumps: [], sas: [sa('1', 'alice_u', 1_500, 8_000, 330), sa('3', 'bob_u', 10, 20, 100)] });
  assert.deepEqual({ ...grown, engineMs: 0 }, { peers: 0, ikeSas: 2, resets: 0, download: 3_020, upload: 510, engineMs: 0, parked: [] });
  // charon restarted: id 1 is now bob's fresh SA (younger than the baseline): counted whole, not as a delta of alice's
  const reused = engine.sample({ at: T0 + 10 * MIN, dumps: [], sas: [sa('1', 'bob_u', 2_000, 9_000, 60)] });
  assert.equal(reused.download, 9_000);
  assert.deepEqual(days(db), [[1, '2026-03-15', 8_000, 1_500], [2, '2026-03-15', 9_020, 2_010]]);
  // the same SA continues even when its counters did not move
  assert.equal(engine.sample({ at: T0 + 15 * MIN, dumps: [], sas: [sa('1', 'bob_u', 2_000, 9_000, 360)] }).download, 0);
});

test('migration 010: the per-account baselines of 005 are carried over per interface and the old table dropped', () => {
  const { db, repo } = store();
  db.prepare('INSERT INTO traffic_baselines_legacy (account_id, public_key, rx, tx, sampled_at) VALUES (?, ?, ?, ?, ?)').run(1, K1, 40, 50, T0);
  db.prepare('INSERT INTO traffic_baselines_legacy (account_id, public_key, rx, tx, sampled_at) VALUES (?, ?, ?, ?, ?)').run(3, K3, 7, 8, T0);
  const engine = new SampleEngine(repo, 'UTC');
  engine.sample({ at: T0 + MIN, dumps: [[1, 'wg1', counters([[K1, 45, 60]])], [2, 'wg2', counters([[K3, 7, 8]])]], sas: null });
  assert.deepEqual(days(db), [[1, '2026-03-15', 10, 5]], 'only the growth since the old panel\'s last sample');
  assert.equal(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'traffic_baselines_legacy'").pluck().get(), 0);
});

test('a sample of more rows than one batch statement: every account counted once, WireGuard and IKEv2 of one account added up', () => {
  const db = openDatabase(':memory:');
  db.prepare(`INSERT INTO wireguard_servers (id, name, interface_name, listen_port, address, net_first, net_last, external_ip,
    dns_1, dns_2, allowed_ips, private_key, public_key) VALUES (1, 'a', 'wg1', 51820, '10.80.0.1/16', 0, 0, '', '', '', '', '', 'x')`).run();
  const insert = db.prepare(`INSERT INTO accounts (id, name, username, password, status, server_id, ip, mangle, private_key, public_key)
    VALUES (?, ?, ?, '', 'enable', 1, ?, ?, '', ?)`);
  const keys = Array.from({ length: 250 }, (_, i) => `${String(i).padStart(43, 'k')}=`);
  db.transaction(() => keys.forEach((k, i) => insert.run(i + 1, `n${i}`, `u${i}`, i + 2, i + 1, k)))();
  const engine = new SampleEngine(new TrafficStatisticsRepository(db), 'UTC');
  const rows = keys.map((k, i): [string, number, number] => [k, i, 2 * i + 1]);
  engine.sample({ at: T0, dumps: [[1, 'wg1', counters(rows)]], sas: [sa('9', 'u7', 1_000, 2_000, 5)] });
  const stored = db.prepare('SELECT account_id, traffic_download, traffic_upload FROM traffic_statistics ORDER BY account_id').raw(true).all() as number[][];
  assert.equal(stored.length, 250);
  assert.deepEqual(stored[7], [8, 15 + 2_000, 7 + 1_000]);
  assert.deepEqual(stored[249], [250, 499, 249]);
});
