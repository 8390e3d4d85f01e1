// Statistics scheduler: frequency read live, a sample at each local midnight, pruning once a day, a last sample on stop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_SLEEP_MS, StatisticsScheduler } from '../../../panel/services/statistics/scheduler.ts';
import { manualClock } from '../../../shared/clock.ts';

function setup(start: string, timeZone = 'UTC') {
  const clock = manualClock(new Date(start));
  let frequency = 5;
  const samples: string[] = [];
  let prunes = 0;
  const timers: Array<{ fn: () => void; ms: number }> = [];
  const scheduler = new StatisticsScheduler({
    clock, timeZone,
    frequencyMinutes: () => frequency,
    sample: async () => void samples.push(clock.now().toISOString()),
    prune: () => void prunes++,
    setTimer: (fn, ms) => (timers.push({ fn, ms }), timers.length),
    clearTimer: () => undefined,
  });
  /** Advances the clock to the armed timer and fires it. */
  const fire = async () => {
    const t = timers.shift()!;
    clock.advance(t.ms);
    t.fn();
    await new Promise((r) => setImmediate(r));
  };
  return { clock, scheduler, samples, timers, fire, setFrequency: (m: number) => (frequency = m), prunes: () => prunes };
}

test('samples every frequency minutes, waking at least once a minute', async () => {
  const s = setup('2026-03-10T10:00:00Z');
  s.scheduler.start();
  assert.equal(s.prunes(), 1, 'prunes on start');
  assert.equal(s.timers[0].ms, MAX_SLEEP_MS);
  for (let i = 0; i < 5; i++) await s.fire();
  assert.deepEqual(s.samples, ['2026-03-10T10:05:00.000Z']);
  for (let i = 0; i < 5; i++) await s.fire();
  assert.deepEqual(s.samples, ['2026-03-10T10:05:00.000Z', '2026-03-10T10:10:00.000Z']);
});

test('a frequency change takes effect without a restart (at the next wake-up, within a minute)', async () => {
  const s = setup('2026-03-10T10:00:00Z');
  s.setFrequency(1440);
  s.scheduler.start();
  await s.fire(); // 10:01, not due
  assert.deepEqual(s.samples, []);
  s.setFrequency(2);
  await s.fire(); // 10:02: due (last 10:00 + 2 min)
  assert.deepEqual(s.samples, ['2026-03-10T10:02:00.000Z']);
  await s.fire();
  await s.fire();
  assert.deepEqual(s.samples, ['2026-03-10T10:02:00.000Z', '2026-03-10T10:04:00.000Z']);
});

test('wakes at local midnight and samples there, and prunes once per local day', async () => {
  const s = setup('2026-03-10T22:59:30Z', 'Europe/Berlin'); // 23:59:30 local
  s.setFrequency(60);
  s.scheduler.start();
  assert.equal(s.timers[0].ms, 30_000, 'next wake is local midnight');
  await s.fire();
  assert.deepEqual(s.samples, ['2026-03-10T23:00:00.000Z']);
  assert.equal(s.prunes(), 2, 'pruned again on the new day');
  await s.fire();
  assert.equal(s.prunes(), 2, 'not twice the same day');
});

test('stop takes a last sample and arms nothing more', async () => {
  const s = setup('2026-03-10T10:00:00Z');
  s.scheduler.start();
  s.clock.advance(20_000);
  await s.scheduler.stop();
  assert.deepEqual(s.samples, ['2026-03-10T10:00:20.000Z']);
  await s.scheduler.stop();
  assert.equal(s.samples.length, 1, 'stop twice samples once');
});
