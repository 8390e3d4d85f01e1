// Bench (not a test): the billing run over 100,000 active services of which 10,000 are due, next to the same invoice rows
// inserted by one SQL statement in the same run; a run with nothing due; and the 24-month simulation of 1,000 services
// checked against its closed-form expectation.
//
// Run: `node --import tsx test/bench/billing-run.ts [--services 100000] [--due 10000] [--rounds 3] [--simulate 1000]`.
// In process, on temp SQLite files (WAL, as the platform opens them); the platform loads no module (pure billing). Each
// round starts from a copy of the same seeded database.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { pino } from 'pino';
import type { ModulesConfig } from '../../config.ts';
import { Platform } from '../../module/platform/platform.ts';
import { PLATFORM_DB_FILE } from '../../module/platform/store/db.ts';
import { manualClock } from '../../shared/clock.ts';
import { expected, simulate } from '../fixtures/billing/simulation.ts';
import { seedDueServices } from '../fixtures/billing/seed.ts';
import { removeDir, tempDir } from '../fixtures/platform/processes.ts';
import { fmt, median } from './bench-math.ts';

const { values: args } = parseArgs({
  options: {
    services: { type: 'string', default: '100000' }, due: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' }, simulate: { type: 'string', default: '1000' },
  },
  strict: true,
});
const N = Number(args.services);
const DUE = Number(args.due);
const ROUNDS = Number(args.rounds);
const NO_MODULES: ModulesConfig = { modules: { Product: {}, Plugin: {}, Payment: {}, Notification: {} } };
const DAY_MS = 86_400_000;

/** The floor: the same renewal rows (uuid, temporary number, customer, period, description, amount) by one INSERT … SELECT. */
/** One INSERT … SELECT of the renewal invoices a run makes (SQLite text), stamped `at`, due by `horizon`. */
const floorInsert = (at: string, horizon: string) => sql`INSERT INTO invoices (uuid, number, customer_uuid, service_uuid, kind, period_start, period_end, description, amount_minor, currency,
    due_date, status, created_at, updated_at)
  SELECT lower(hex(randomblob(16))), 'tmp:' || b.service_uuid || ':' || b.next_due_date, s.customer_uuid, b.service_uuid, 'renewal', b.next_due_date,
    b.next_period_end, s.module || ' ' || coalesce(json_extract(p.product_data, '$.plan_type'), p.uuid) || ' (' || b.billing_cycle || '), '
      || b.next_due_date || ' to ' || b.next_period_end,
    b.recurring_minor, b.currency, b.next_due_date, 'unpaid', ${at}, ${at}
  FROM service_billing b JOIN services s ON s.uuid = b.service_uuid JOIN products p ON p.uuid = s.product_uuid
  WHERE b.state IN ('active', 'overdue', 'suspended') AND b.next_due_date <= ${horizon}`;

async function open(dir: string, at: Date): Promise<Platform> {
  return Platform.open({ dataDir: dir, clock: manualClock(at), logger: pino({ level: 'silent' }), modulesConfig: NO_MODULES, moduleWatchMs: 0 });
}

async function main(): Promise<void> {
  const seedDir = tempDir('bench-billing-seed');
  const dirs: string[] = [seedDir];
  try {
    const t0 = performance.now();
    // 10% due in 3 days (within the 7-day lead), the rest due in 10 to 40 days.
    const seeded = seedDueServices(seedDir, N, { dueOf: (i) => (i % Math.round(N / DUE) === 0 ? 3 : 10 + (i % 31)) });
    console.log(`seeded ${N} active services (${seeded.services.length} due within the lead time) in ${fmt((performance.now() - t0) / 1000)} s`);
    const now = new Date();
    const floors: number[] = [];
    const making: number[] = [];
    const totals: number[] = [];
    const dunning: number[] = [];
    const idle: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const dir = tempDir('bench-billing');
      dirs.push(dir);
      copyFileSync(join(seedDir, PLATFORM_DB_FILE), join(dir, PLATFORM_DB_FILE));
      const quiet = await open(dir, new Date(now.getTime() - 10 * DAY_MS));
      try {
        // Nothing due: the clock ten days back, no service within the lead time.
        const nothing = await quiet.recurring.parts.run.run();
        if (nothing.renewals !== 0) throw new Error(`expected nothing due, made ${nothing.renewals}`);
        idle.push(nothing.total_ms);
      } finally {
        await quiet.close();
      }
      const platform = await open(dir, now);
      try {
        const at = now.toISOString();
        const horizon = new Date(now.getTime() + 7 * DAY_MS).toISOString().slice(0, 10);
        const start = performance.now();
        const inserted = platform.store.transaction(async (tx) => {
          const rows = Number((await floorInsert(at, horizon).execute(tx.db)).numAffectedRows ?? 0);
          throw Object.assign(new Error('rollback'), { rows });
        });
        try {
          await inserted;
        } catch (error) {
          if ((error as { rows?: number }).rows !== seeded.services.length) throw error;
        }
        floors.push(performance.now() - start);
        const summary = await platform.recurring.parts.run.run();
        if (summary.renewals !== seeded.services.length) throw new Error(`made ${summary.renewals} of ${seeded.services.length}`);
        making.push(summary.renewals_ms);
        totals.push(summary.total_ms);
        dunning.push(summary.dunning_ms);
        console.log(`round ${round + 1}: floor ${fmt(floors.at(-1)!)} ms, renewal invoices ${summary.renewals_ms} ms in ${summary.batches} batches, dunning ${summary.dunning_ms} ms, whole run ${summary.total_ms} ms, nothing due ${idle.at(-1)} ms`);
      } finally {
        await platform.close();
      }
    }
    const floor = median(floors);
    console.log(`\n${DUE} renewal invoices among ${N} services (median of ${ROUNDS}):`);
    console.log(`  one INSERT … SELECT of the same rows (floor)    ${fmt(floor)} ms`);
    console.log(`  billing run, making the invoices              ${fmt(median(making))} ms  = ${fmt(median(making) / floor, 2)}x the floor (target <= 5x)`);
    console.log(`  billing run, dunning (${DUE} reminders claimed)   ${fmt(median(dunning))} ms`);
    console.log(`  billing run, whole (events carried out, dunning) ${fmt(median(totals))} ms  = ${fmt(median(totals) / floor, 2)}x the floor`);
    console.log(`  a run with nothing due                        ${fmt(median(idle))} ms (target <= 1000 ms)`);
  } finally {
    for (const dir of dirs) removeDir(dir);
  }
  const services = Number(args.simulate);
  if (services > 0) {
    const run = await simulate(services);
    const want = expected(services);
    const same = JSON.stringify(run.outcome) === JSON.stringify(want);
    console.log(`\n24 months (730 days) of ${services} services in ${fmt(run.ms / 1000)} s: ${same ? 'equal to the closed form' : 'DIFFERS from the closed form'}`);
    console.log(`  simulated ${JSON.stringify(run.outcome)}`);
    if (!same) {
      console.log(`  expected  ${JSON.stringify(want)}`);
      process.exitCode = 1;
    }
  }
}

await main();
