// The billing run on BullMQ (a real redis-server) with two worker processes on the platform's database: the schedule and
// "run now" asked of the API process at once are run by the workers in parallel, and every due service gets exactly one
// renewal invoice for the period (the UNIQUE (service, period) guard), each renewal event carried out once; a remote
// worker (no database) hands the run it takes to the platform over the worker API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requireTools } from '../helpers/require-tools.ts';
import { admin } from '../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, startRedis, stopOnFailure, tempDir, vpnhost, type Child } from '../fixtures/platform/processes.ts';
import { billingDataDir, checkRenewals, checkRunShares, renewalsSettled } from '../fixtures/billing/seed.ts';

const TUNING = { VPNHOST_PLATFORM_LOCK_MS: '2000', VPNHOST_LOG_LEVEL: 'error' };

test('BullMQ with two worker processes: the schedule and run-now at once make one invoice per service and period', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const { dataDir, seeded, token } = await billingDataDir('billing-bullmq', 2000, 10).catch(stopOnFailure(redis));
  const children: Child[] = [];
  try {
    const workers = await Promise.all([0, 1].map(() => spawnVpnhost(['platform', 'worker', '--data', dataDir, '--queue', redis.url, '--workers', '4'], /platform worker (started)/, TUNING)));
    children.push(...workers);
    const api = await spawnVpnhost(['platform', 'serve', '--listen', `127.0.0.1:${await freePort()}`, '--data', dataDir, '--queue', redis.url, '--workers', '0'],
      /platform listening on (http:\/\/\S+)/, TUNING);
    children.push(api);
    const runs = await Promise.all([0, 1, 2, 3].map(() => admin(api.url, token, 'POST', '/billing/run', { wait_ms: 0 })));
    for (const run of runs) assert.ok([200, 202].includes(run.status), JSON.stringify(run.body));
    await renewalsSettled(dataDir, seeded, 180_000);
    checkRenewals(dataDir, seeded);
    t.diagnostic(checkRunShares(dataDir, seeded, { schedule: 1, admin: 4 }));
  } finally {
    for (const child of children) await child.kill();
    await redis.stop();
    removeDir(dataDir);
  }
});

test('a remote worker (no database) that takes the billing run hands it to the platform, which makes every invoice once', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const { dataDir, seeded, token } = await billingDataDir('billing-remote', 300, 50).catch(stopOnFailure(redis));
  const workerDir = tempDir('billing-remote-worker');
  const children: Child[] = [];
  try {
    const workerToken = await vpnhost(['platform', 'worker-token', 'create', '--data', dataDir]);
    const api = await spawnVpnhost(['platform', 'serve', '--listen', `127.0.0.1:${await freePort()}`, '--data', dataDir, '--queue', redis.url, '--workers', '0'],
      /platform listening on (http:\/\/\S+)/, TUNING);
    children.push(api);
    children.push(await spawnVpnhost(['platform', 'worker', '--queue', redis.url, '--platform-url', api.url, '--workers', '2'], /platform worker (started)/,
      { ...TUNING, VPNHOST_PLATFORM_TOKEN: workerToken }, 60_000, workerDir));
    const run = await admin(api.url, token, 'POST', '/billing/run', { wait_ms: 60_000 });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    await renewalsSettled(dataDir, seeded, 120_000);
    checkRenewals(dataDir, seeded);
    t.diagnostic(checkRunShares(dataDir, seeded, { schedule: 1, admin: 1 }));
  } finally {
    for (const child of children) await child.kill();
    await redis.stop();
    removeDir(dataDir);
    removeDir(workerDir);
  }
});
