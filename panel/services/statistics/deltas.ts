// Pure delta logic of the traffic sampler: counters of one dump against the last baseline → bytes per account and day.
import { dayKey, nextDayStart } from './zoned-days.ts';

/** The local day holding a sample's instant, computed once per sample: its key and first instant (Unix ms). */
export interface SampleDay {
  key: string;
  start: number;
}

/** The counters last seen for one peer (stored in traffic_baselines). */
export interface Baseline {
  publicKey: string;
  /** `transfer_rx`: bytes received from the peer. */
  rx: number;
  /** `transfer_tx`: bytes sent to the peer. */
  tx: number;
  /** Unix ms of the sample that read these counters. */
  sampledAt: number;
}

/** One peer as this sample's dump shows it. */
export interface PeerCounters {
  publicKey: string;
  rx: number;
  tx: number;
}

/** Bytes to add to one account's row of one day. */
export interface DayTraffic {
  day: string;
  /** Bytes the server sent to the peer (`transfer_tx` growth). */
  download: number;
  /** Bytes received from the peer (`transfer_rx` growth). */
  upload: number;
}

/** What one peer's sample yields: the bytes per day and the new baseline. */
export interface PeerDelta {
  days: DayTraffic[];
  /** True when the counters went backwards or the key changed: the current counters were counted whole. */
  reset: boolean;
  baseline: Baseline;
}

/**
 * The traffic of one peer since `before` (null: none kept, e.g. a peer added or re-added since the last sample).
 *
 * - Counters that grew: the growth is the traffic.
 * - Counters that went backwards in either direction, or a different public key (peer removed and re-added,
 *   daemon restarted, interface re-created): the counters started again from zero, so the current values are the
 *   traffic since then (a new baseline; never a negative or a wrapped delta). Bytes between the last sample and
 *   the reset are what sampling before disable/delete/shutdown keeps from being lost.
 * - No baseline: the current counters are counted whole (the peer started at zero when it was added).
 *
 * The bytes are spread over the local days between the previous sample and `now` in proportion to the time each
 * day holds (the scheduler also samples at each local midnight, so this split rarely matters); a reset or a first
 * sighting puts everything on the day of `now`.
 */
export function peerDelta(before: Baseline | null, now: PeerCounters, at: number, timeZone: string, today?: SampleDay): PeerDelta {
  const baseline: Baseline = { publicKey: now.publicKey, rx: now.rx, tx: now.tx, sampledAt: at };
  const valid = before !== null && before.publicKey === now.publicKey && now.rx >= before.rx && now.tx >= before.tx;
  const upload = valid ? now.rx - before.rx : now.rx;
  const download = valid ? now.tx - before.tx : now.tx;
  const reset = before !== null && !valid;
  if (upload === 0 && download === 0) return { days: [], reset, baseline };
  const from = valid && before.sampledAt < at ? before.sampledAt : at;
  // Fast path (the common case): the span lies within the sample's day.
  if (today && from >= today.start) return { days: [{ day: today.key, download, upload }], reset, baseline };
  return { days: splitOverDays(from, at, download, upload, timeZone), reset, baseline };
}

/**
 * Splits `download`/`upload` bytes over the local days of (`from`, `to`] by time share; integer bytes, the
 * remainder going to the last day so the sums are exact.
 */
export function splitOverDays(from: number, to: number, download: number, upload: number, timeZone: string): DayTraffic[] {
  const lastDay = dayKey(to, timeZone);
  if (from >= to || dayKey(from, timeZone) === lastDay) return [{ day: lastDay, download, upload }];
  const out: DayTraffic[] = [];
  const span = to - from;
  let cursor = from;
  let givenDown = 0;
  let givenUp = 0;
  while (true) {
    const boundary = nextDayStart(cursor, timeZone);
    const day = dayKey(cursor, timeZone);
    if (boundary >= to) {
      out.push({ day, download: download - givenDown, upload: upload - givenUp });
      break;
    }
    const share = (boundary - cursor) / span;
    const d = Math.floor(download * share);
    const u = Math.floor(upload * share);
    givenDown += d;
    givenUp += u;
    if (d || u) out.push({ day, download: d, upload: u });
    cursor = boundary;
  }
  return out;
}
