// The links repository on a real SQLite file: consume is single-use across connections and threads at once, expiry,
// disabled accounts, download tokens and their grace period, purge, revoke.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { openDatabase, type Db } from '../../../panel/store/db.ts';
import { OtlLinksRepository } from '../../../panel/store/repositories/otl-links.ts';
import { treeModuleUrl } from '../../../shared/tree-module.ts';

/** A database file with one server and accounts 1 (enabled) and 2 (disabled), inserted directly. */
function seed(dir: string): Db {
  const db = openDatabase(join(dir, 'panel.db'));
  db.prepare(`INSERT INTO wireguard_servers (id, name, interface_name, listen_port, address, net_first, net_last, external_ip,
    dns_1, dns_2, allowed_ips, private_key, public_key) VALUES (1, 's', 'wg0', 51820, '10.0.0.1/24', 167772160, 167772415,
    '192.0.2.1', '1.1.1.1', '8.8.8.8', '0.0.0.0/0', 'x', 'pub')`).run();
  const account = db.prepare(`INSERT INTO accounts (id, name, username, password, status, server_id, ip, mangle, private_key, public_key)
    VALUES (?, ?, ?, '', ?, 1, ?, ?, '', ?)`);
  account.run(1, 'a', 'a', 'enable', 167772162, 1, 'pa');
  account.run(2, 'b', 'b', 'disable', 167772163, 2, 'pb');
  return db;
}

const D = (n: number) => n.toString(16).padStart(64, '0');
const T = (s: string) => `2026-01-01T00:00:${s}.000Z`;

test('consume: once, within the lifetime, only for an enabled account; download token for the grace period', () => {
  const dir = mkdtempSync(join(tmpdir(), 'otl-repo-'));
  const db = seed(dir);
  try {
    const repo = new OtlLinksRepository(db);
    repo.insert(D(1), 1, T('00'), T('30'));
    repo.insert(D(2), 2, T('00'), T('30'));
    repo.insert(D(3), 1, T('00'), T('10'));
    assert.equal(repo.isLive(D(1), T('05')), true);
    assert.equal(repo.isLive(D(2), T('05')), false, 'disabled account');
    assert.equal(repo.consume(D(2), T('05'), D(9), T('20')), null);
    assert.equal(repo.consume(D(3), T('10'), D(9), T('20')), null, 'expired at expires_at');
    assert.deepEqual(repo.consume(D(1), T('05'), D(7), T('15')), { account_id: 1 });
    assert.equal(repo.consume(D(1), T('06'), D(8), T('16')), null, 'second consume');
    assert.equal(repo.isLive(D(1), T('06')), false);
    assert.deepEqual(repo.download(D(1), D(7), T('14')), { account_id: 1 });
    assert.equal(repo.download(D(1), D(8), T('14')), null, 'another token');
    assert.equal(repo.download(D(1), D(7), T('15')), null, 'grace over');
    assert.deepEqual(repo.live(T('05')).map((r) => r.digest), [D(2), D(3)]);
    assert.equal(repo.purge(T('20')), 2, 'the used link past its grace and the expired one');
    assert.deepEqual(repo.live(T('20')).map((r) => r.digest), [D(2)]);
    assert.equal(repo.delete(D(2)), true);
    assert.equal(repo.delete(D(2)), false);
    repo.insert(D(4), 1, T('00'), T('30'));
    db.prepare('DELETE FROM accounts WHERE id = 1').run();
    assert.equal(repo.get(D(4)), undefined, 'cascade with the account');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('four threads with their own connections consume one link at once: exactly one wins', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'otl-race-'));
  const db = seed(dir);
  const workers: Worker[] = [];
  try {
    const repoUrl = treeModuleUrl('../../../panel/store/repositories/otl-links', import.meta.url);
    const dbUrl = treeModuleUrl('../../../panel/store/db', import.meta.url);
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      (async () => {
        if (workerData.dbUrl.endsWith('.ts')) (await import('tsx/esm/api')).register();
        const { openDatabase } = await import(workerData.dbUrl);
        const { OtlLinksRepository } = await import(workerData.repoUrl);
        const db = openDatabase(workerData.path);
        const repo = new OtlLinksRepository(db);
        const flag = new Int32Array(workerData.start);
        Atomics.add(flag, 1, 1);
        Atomics.wait(flag, 0, 0);
        const won = [];
        for (const digest of workerData.digests) won.push(repo.consume(digest, workerData.now, workerData.view, workerData.until) !== null);
        db.close();
        parentPort.postMessage(won);
      })().catch((err) => parentPort.postMessage({ error: String(err) }));`;
    const repo = new OtlLinksRepository(db);
    const digests = Array.from({ length: 50 }, (_, i) => D(100 + i));
    for (const d of digests) repo.insert(d, 1, T('00'), T('30'));
    const start = new SharedArrayBuffer(8);
    const flag = new Int32Array(start);
    const results = Array.from({ length: 4 }, (_, i) => {
      const worker = new Worker(code, {
        eval: true,
        workerData: { path: join(dir, 'panel.db'), repoUrl, dbUrl, start, digests, now: T('01'), view: D(900 + i), until: T('20') },
      });
      workers.push(worker);
      return new Promise<boolean[]>((resolve, reject) => {
        worker.once('message', (m) => (Array.isArray(m) ? resolve(m) : reject(new Error(m.error))));
        worker.once('error', reject);
      });
    });
    for (let i = 0; i < 2000 && Atomics.load(flag, 1) < 4; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(Atomics.load(flag, 1), 4, 'all threads ready');
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    const won = await Promise.all(results);
    digests.forEach((_, j) => assert.equal(won.filter((w) => w[j]).length, 1, `link ${j}: one winner`));
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
