// Delta logic of the traffic sampler: growth, resets, re-adds, first sightings, day boundaries, DST days, month lengths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peerDelta, splitOverDays, type Baseline } from '../../../panel/services/statistics/deltas.ts';
import { dayKey, dayStart, daysInMonth, nextDayStart } from '../../../panel/services/statistics/zoned-days.ts';

const UTC = 'UTC';
const KEY = 'pk=';
const at = (iso: string) => Date.parse(iso);
const base = (rx: number, tx: number, when: string, publicKey = KEY): Baseline => ({ publicKey, rx, tx, sampledAt: at(when) });

test('growth: download is transfer_tx growth, upload is transfer_rx growth, on the sample day', () => {
  const d = peerDelta(base(100, 1000, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 150, tx: 1600 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.deepEqual(d.days, [{ day: '2026-03-10', download: 600, upload: 50 }]);
  assert.equal(d.reset, false);
  assert.deepEqual(d.baseline, { publicKey: KEY, rx: 150, tx: 1600, sampledAt: at('2026-03-10T10:05:00Z') });
});

test('unchanged counters add nothing but move the baseline time', () => {
  const d = peerDelta(base(5, 5, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 5, tx: 5 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.deepEqual(d.days, []);
  assert.equal(d.baseline.sampledAt, at('2026-03-10T10:05:00Z'));
});

test('a counter that went backwards (re-add, daemon restart) starts a new baseline: current values counted whole', () => {
  const d = peerDelta(base(10_000, 20_000, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 300, tx: 700 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.equal(d.reset, true);
  assert.deepEqual(d.days, [{ day: '2026-03-10', download: 700, upload: 300 }]);
  assert.equal(d.baseline.rx, 300);
  // only one direction backwards is a reset too (counters restart together)
  const one = peerDelta(base(10_000, 20, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 50, tx: 9_000 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.equal(one.reset, true);
  assert.deepEqual(one.days, [{ day: '2026-03-10', download: 9_000, upload: 50 }]);
  // after a reset to zero exactly: nothing to add, never a negative
  const zero = peerDelta(base(10, 10, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 0, tx: 0 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.deepEqual(zero.days, []);
  assert.equal(zero.reset, true);
});

test('a different public key is a new peer: counted whole', () => {
  const d = peerDelta(base(10, 10, '2026-03-10T10:00:00Z', 'old='), { publicKey: KEY, rx: 40, tx: 60 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.equal(d.reset, true);
  assert.deepEqual(d.days, [{ day: '2026-03-10', download: 60, upload: 40 }]);
});

test('no baseline (peer added or re-enabled since the last sample): counted whole, not a reset', () => {
  const d = peerDelta(null, { publicKey: KEY, rx: 123, tx: 456 }, at('2026-03-10T23:59:00Z'), UTC);
  assert.equal(d.reset, false);
  assert.deepEqual(d.days, [{ day: '2026-03-10', download: 456, upload: 123 }]);
});

test('disabled and re-enabled peer: the dropped baseline makes the re-added counters count whole even when larger', () => {
  // Sampled at 1,000/1,000 just before disable; after enable the new peer did 5,000/5,000 before the next sample.
  // With the baseline kept this would count 4,000 (1,000 lost); the sampler drops it when the peer leaves.
  const kept = peerDelta(base(1_000, 1_000, '2026-03-10T10:00:00Z'), { publicKey: KEY, rx: 5_000, tx: 5_000 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.equal(kept.days[0].download, 4_000);
  const dropped = peerDelta(null, { publicKey: KEY, rx: 5_000, tx: 5_000 }, at('2026-03-10T10:05:00Z'), UTC);
  assert.equal(dropped.days[0].download, 5_000);
});

test('a delta spanning midnight is split by time share, sums exact', () => {
  const d = peerDelta(base(0, 0, '2026-03-10T23:55:00Z'), { publicKey: KEY, rx: 1_000, tx: 2_001 }, at('2026-03-11T00:05:00Z'), UTC);
  assert.deepEqual(d.days, [
    { day: '2026-03-10', download: 1_000, upload: 500 },
    { day: '2026-03-11', download: 1_001, upload: 500 },
  ]);
  const long = splitOverDays(at('2026-03-10T12:00:00Z'), at('2026-03-13T12:00:00Z'), 3_000_000, 0, UTC);
  assert.deepEqual(long.map((x) => x.day), ['2026-03-10', '2026-03-11', '2026-03-12', '2026-03-13']);
  assert.deepEqual(long.map((x) => x.download), [500_000, 1_000_000, 1_000_000, 500_000]);
  // a sample exactly at midnight belongs wholly to the day that ended
  const edge = splitOverDays(at('2026-03-10T23:00:00Z'), at('2026-03-11T00:00:00Z'), 10, 10, UTC);
  assert.deepEqual(edge, [{ day: '2026-03-10', download: 10, upload: 10 }]);
});

test('days follow the panel time zone, not UTC', () => {
  const tz = 'Asia/Tokyo'; // UTC+9
  assert.equal(dayKey(at('2026-03-10T15:30:00Z'), tz), '2026-03-11');
  const d = peerDelta(base(0, 0, '2026-03-10T15:10:00Z'), { publicKey: KEY, rx: 0, tx: 100 }, at('2026-03-10T15:20:00Z'), tz);
  assert.deepEqual(d.days, [{ day: '2026-03-11', download: 100, upload: 0 }]);
});

test('DST change: local days of 23 and 25 hours, boundaries at local midnight', () => {
  const tz = 'Europe/Berlin';
  // 2026-03-29: clocks go 02:00 → 03:00 (23 h day); 2026-10-25: 03:00 → 02:00 (25 h day)
  assert.equal(nextDayStart(dayStart(2026, 3, 29, tz), tz) - dayStart(2026, 3, 29, tz), 23 * 3600_000);
  assert.equal(nextDayStart(dayStart(2026, 10, 25, tz), tz) - dayStart(2026, 10, 25, tz), 25 * 3600_000);
  assert.equal(dayStart(2026, 3, 29, tz), at('2026-03-28T23:00:00Z'));
  assert.equal(dayStart(2026, 3, 30, tz), at('2026-03-29T22:00:00Z'));
  // a delta over the short day and the next half day: shares by real elapsed time (23 h : 11 h)
  const split = splitOverDays(at('2026-03-28T23:00:00Z'), at('2026-03-30T09:00:00Z'), 34 * 1000, 0, tz);
  assert.deepEqual(split, [
    { day: '2026-03-29', download: 23_000, upload: 0 },
    { day: '2026-03-30', download: 11_000, upload: 0 },
  ]);
  // the long day in autumn: 25 h share
  const autumn = splitOverDays(at('2026-10-24T22:00:00Z'), at('2026-10-26T23:00:00Z'), 49 * 10, 0, tz);
  assert.deepEqual(autumn, [
    { day: '2026-10-25', download: 250, upload: 0 },
    { day: '2026-10-26', download: 240, upload: 0 },
  ]);
});

test('a zone whose DST change skips midnight still has a first instant of that day', () => {
  const tz = 'America/Santiago'; // 2026-09-06: 00:00 → 01:00
  const start = dayStart(2026, 9, 6, tz);
  assert.equal(dayKey(start, tz), '2026-09-06');
  assert.equal(dayKey(start - 1000, tz), '2026-09-05');
});

test('months of 28, 29, 30 and 31 days', () => {
  assert.equal(daysInMonth(2026, 2), 28);
  assert.equal(daysInMonth(2024, 2), 29);
  assert.equal(daysInMonth(2000, 2), 29);
  assert.equal(daysInMonth(2100, 2), 28);
  assert.equal(daysInMonth(2026, 4), 30);
  assert.equal(daysInMonth(2026, 12), 31);
  // the split crosses the month end correctly
  const split = splitOverDays(at('2024-02-29T12:00:00Z'), at('2024-03-01T12:00:00Z'), 2, 2, UTC);
  assert.deepEqual(split, [{ day: '2024-02-29', download: 1, upload: 1 }, { day: '2024-03-01', download: 1, upload: 1 }]);
});
