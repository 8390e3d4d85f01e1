// Crash safety of provisioning: SIGKILL the platform (embedded queue) and a BullMQ worker in the middle of createJob,
// restart, and check every service settles (completed, or failed with a reason) with exactly one panel account.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { requireTools } from '../helpers/require-tools.ts';
import { admin, panel, until } from '../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, startPanel, startRedis, stopOnFailure, tempDir, vpnhost, type Child, type PanelProcess } from '../fixtures/platform/processes.ts';
import { createServer } from '../fixtures/platform/setup.ts';
import { startSlowProxy, type SlowProxy } from '../fixtures/platform/slow-proxy.ts';

const MAX_KILLS = 8;
const TUNING = { VPNHOST_PLATFORM_LEASE_MS: '1500', VPNHOST_PLATFORM_LOCK_MS: '2000', VPNHOST_LOG_LEVEL: 'warn' };

interface Harness {
  panel: PanelProcess;
  proxy: SlowProxy;
  dataDir: string;
  token: string;
  children: Child[];
}

async function harness(): Promise<Harness> {
  const p = await startPanel({ accounts: 1000 });
  try {
    await createServer(p, 'main', '10.78.0.1/22');
    const proxy = await startSlowProxy(p.url);
    const dataDir = tempDir('platform-crash');
    const token = await vpnhost(['platform', 'admin-token', 'create', '--data', dataDir, '--comment', 'crash test']);
    assert.match(token, /^vpa_[0-9a-f]{64}$/);
    return { panel: p, proxy, dataDir, token, children: [] };
  } catch (err) {
    await p.stop();
    removeDir(p.dataDir);
    throw err;
  }
}

async function cleanup(h: Harness): Promise<void> {
  for (const child of h.children) await child.kill();
  await h.proxy.close();
  await h.panel.stop();
  removeDir(h.panel.dataDir);
  removeDir(h.dataDir);
}

async function platformServe(h: Harness, port: number, queue = 'embedded', workers = 2): Promise<Child> {
  const child = await spawnVpnhost(
    ['platform', 'serve', '--listen', `127.0.0.1:${port}`, '--data', h.dataDir, '--queue', queue, '--workers', String(workers)],
    /platform listening on (http:\/\/\S+)/, TUNING,
  );
  h.children.push(child);
  return child;
}

/** Registers the proxied panel, creates a product and `count` services, and asks for each to be created. */
async function seed(h: Harness, url: string, count: number): Promise<string[]> {
  const api = (method: string, path: string, body?: unknown) => admin(url, h.token, method, path, body);
  assert.equal((await api('POST', '/panels', { location: 'lab', api_url: h.proxy.url, access_hash: h.panel.accessHash })).status, 201);
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'lab', plan_type: 'basic', bandwidth: 25 } });
  assert.equal(product.status, 201);
  const uuids: string[] = [];
  for (let i = 0; i < count; i++) {
    const svc = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: `crash_${i}` } });
    assert.equal(svc.status, 201);
    uuids.push(svc.body.uuid);
  }
  await Promise.all(uuids.map(async (uuid) => assert.deepEqual((await api('POST', `/services/${uuid}/create`)).body, { status: 'success' })));
  return uuids;
}

/** Waits (bounded) until every service is completed or failed; returns their views. */
async function settled(url: string, token: string, uuids: string[], timeoutMs: number): Promise<any[]> {
  return until(async () => {
    const views = [];
    for (const uuid of uuids) {
      const res = await admin(url, token, 'GET', `/services/${uuid}`);
      if (!['completed', 'failed'].includes(res.body.provision_status)) return undefined;
      views.push(res.body);
    }
    return views;
  }, timeoutMs, 500);
}

/** Every completed service has exactly one account on the panel; no service owns two; failures carry a reason. */
async function checkOutcome(t: TestContext, h: Harness, views: any[]): Promise<void> {
  const accounts = (await panel<any[]>(h.panel.url, h.panel.accessHash, 'GET', '/account')).msg;
  const byUsername = new Map<string, any[]>();
  for (const a of accounts) byUsername.set(a.username, [...(byUsername.get(a.username) ?? []), a]);
  let completed = 0;
  let failedWithAccount = 0;
  for (const view of views) {
    const owned = byUsername.get(view.service_data.username) ?? [];
    assert.ok(owned.length <= 1, `service ${view.uuid} owns ${owned.length} accounts`);
    if (view.provision_status === 'completed') {
      completed++;
      assert.equal(owned.length, 1, `completed service ${view.uuid} has no account`);
      assert.equal(owned[0].name, view.provision_data.account_name);
      assert.equal(owned[0].allowed_IPs.replace(/\/32$/, ''), view.provision_data.address.replace(/\/32$/, ''));
    } else {
      assert.ok(typeof view.status_reason === 'string' && view.status_reason.length > 0, `failed service ${view.uuid} has no reason`);
      if (owned.length) failedWithAccount++;
    }
  }
  assert.equal(accounts.length, completed + failedWithAccount, 'no account without a service');
  const addresses = new Set(accounts.map((a) => a.allowed_IPs));
  assert.equal(addresses.size, accounts.length, 'addresses are unique');
  t.diagnostic(`${completed} completed, ${views.length - completed} failed (${failedWithAccount} of them holding their account), ${accounts.length} accounts`);
}

test('SIGKILL of the platform during createJob (embedded queue) leaves no service stuck and no duplicate account', async (t) => {
  const h = await harness();
  try {
    const port = await freePort();
    let child = await platformServe(h, port);
    const uuids = await seed(h, child.url, 60);
    let kills = 0;
    while (kills < MAX_KILLS) {
      const answeredBefore = h.proxy.answered();
      const skip = Math.floor(Math.random() * 3);
      const busy = await until(async () => (h.proxy.inFlight() > 0 && h.proxy.answered() >= answeredBefore + skip ? true : undefined), 20_000, 10).catch(() => false);
      if (!busy) break;
      await child.kill();
      kills++;
      assert.equal(child.output().includes(h.panel.accessHash), false, 'access hash never logged');
      child = await platformServe(h, port);
    }
    t.diagnostic(`${kills} SIGKILLs during createJob`);
    assert.ok(kills >= 3, `expected several kills, got ${kills}`);
    const views = await settled(child.url, h.token, uuids, 120_000);
    await checkOutcome(t, h, views);
    assert.equal(child.output().includes(h.panel.accessHash), false, 'access hash never logged');
    await child.stop();
  } finally {
    await cleanup(h);
  }
});

test('two BullMQ worker processes on one Redis, one SIGKILLed mid-run: 200 services settle, one account each', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const h = await harness().catch(stopOnFailure(redis));
  try {
    const port = await freePort();
    const api = await platformServe(h, port, redis.url, 0);
    const uuids = await seed(h, api.url, 200);
    const workers = [
      await spawnVpnhost(['platform', 'worker', '--data', h.dataDir, '--queue', redis.url, '--workers', '4'], /platform worker (started)/, TUNING),
      await spawnVpnhost(['platform', 'worker', '--data', h.dataDir, '--queue', redis.url, '--workers', '4'], /platform worker (started)/, TUNING),
    ];
    h.children.push(...workers);
    await until(async () => (h.proxy.answered() >= 40 && h.proxy.inFlight() > 0 ? true : undefined), 60_000, 10);
    await workers[0].kill();
    t.diagnostic(`worker killed after ${h.proxy.answered()} account creations`);
    const views = await settled(api.url, h.token, uuids, 180_000);
    await checkOutcome(t, h, views);
    const completed = views.filter((v) => v.provision_status === 'completed').length;
    assert.ok(completed >= 190, `most services complete (got ${completed})`);
    await workers[1].stop();
    await api.stop();
  } finally {
    await cleanup(h);
    await redis.stop();
  }
});

