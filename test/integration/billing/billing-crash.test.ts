// Exactly one renewal invoice per service and period, whatever happens: the platform SIGKILLed five times during a
// billing run over 2,000 due services and restarted (the run is taken again and finishes; every outbox row carried
// out), and two platform processes on one database running the schedule and "run now" at once (each renewal's e-mail
// recorded once). The tests run without the e-mail module (2,000 mails would be most of their time): each renewal event
// is carried out once, and the e-mail module keys its sends by event (tested with it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admin, until } from '../../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, type Child } from '../../fixtures/platform/processes.ts';
import { billingDataDir, checkRenewals, checkRunShares, readDb, renewalCounts, renewalsSettled } from '../../fixtures/billing/seed.ts';

const TUNING = { VPNHOST_PLATFORM_LEASE_MS: '1500', VPNHOST_LOG_LEVEL: 'error' };
const KILLS = 5;

function serve(dataDir: string, port: number): Promise<Child> {
  return spawnVpnhost(['platform', 'serve', '--listen', `127.0.0.1:${port}`, '--data', dataDir, '--workers', '4'], /platform listening on (http:\/\/\S+)/, TUNING);
}

test('SIGKILL five times during a billing run over 2,000 due services: each gets exactly one invoice for the period', async (t) => {
  const { dataDir, seeded } = await billingDataDir('billing-crash', 2000, 10);
  const children: Child[] = [];
  try {
    const port = await freePort();
    const db = readDb(dataDir);
    let kills = 0;
    try {
      let child = await serve(dataDir, port);
      children.push(child);
      while (kills < KILLS) {
        // Kill as soon as this life made progress (the schedule queued the run at start; after a restart the lost run is taken again).
        const before = renewalCounts(db, seeded).made;
        const progressed = await until(async () => {
          const made = renewalCounts(db, seeded).made;
          return made > before ? made : undefined;
        }, 120_000, 5);
        if (progressed >= seeded.services.length) break;
        await child.kill();
        kills++;
        t.diagnostic(`kill ${kills}: ${renewalCounts(db, seeded).made} of ${seeded.services.length} invoices made`);
        child = await serve(dataDir, port);
        children.push(child);
      }
    } finally {
      db.close();
    }
    assert.equal(kills, KILLS, 'every kill landed during the run');
    await renewalsSettled(dataDir, seeded, 180_000);
    checkRenewals(dataDir, seeded);
  } finally {
    for (const child of children) await child.kill();
    removeDir(dataDir);
  }
});

test('two platform processes on one database: the schedule and "run now" on both at once make one invoice per period', async (t) => {
  const { dataDir, seeded, token } = await billingDataDir('billing-two', 2000, 10);
  const children: Child[] = [];
  try {
    const [a, b] = await Promise.all([serve(dataDir, await freePort()), serve(dataDir, await freePort())]);
    children.push(a, b);
    const runs = await Promise.all([a, b, a, b].map((c) => admin(c.url, token, 'POST', '/billing/run', { wait_ms: 0 })));
    for (const run of runs) assert.ok([200, 202].includes(run.status), JSON.stringify(run.body));
    await renewalsSettled(dataDir, seeded, 180_000);
    checkRenewals(dataDir, seeded);
    t.diagnostic(checkRunShares(dataDir, seeded, { schedule: 1, admin: 4 }));
  } finally {
    for (const child of children) await child.kill();
    removeDir(dataDir);
  }
});
