// Local calendar days in an IANA time zone (the panel's, as GET /system/info reports): day keys, day starts, month lengths.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall-clock fields of `instant` in `timeZone`. */
export function wallClock(instant: number, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour % 24, minute: parts.minute, second: parts.second };
}

/** `YYYY-MM-DD` of `instant` in `timeZone`. */
export function dayKey(instant: number, timeZone: string): string {
  const w = wallClock(instant, timeZone);
  return formatDay(w.year, w.month, w.day);
}

/** `YYYY-MM-DD` from numbers. */
export function formatDay(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Offset of `timeZone` from UTC at `instant`, in ms (wall time minus UTC), whole seconds. */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The first instant (Unix ms) of local day `year-month-day` in `timeZone`: local midnight, or the first existing
 * instant of that day where a DST change skips midnight.
 */
export function dayStart(year: number, month: number, day: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  let guess = wall - offsetAt(wall, timeZone);
  guess = wall - offsetAt(guess, timeZone);
  // Midnight skipped (or the guess landed in the previous day): step forward to the first instant of the day.
  const key = formatDay(year, month, day);
  if (dayKey(guess, timeZone) < key) {
    let lo = guess;
    let hi = guess + 3 * 3600_000;
    while (hi - lo > 1000) {
      const mid = Math.floor((lo + hi) / 2);
      if (dayKey(mid, timeZone) < key) lo = mid;
      else hi = mid;
    }
    guess = hi;
  }
  return guess;
}

/** The start of the local day after the one holding `instant`. */
export function nextDayStart(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  const next = new Date(Date.UTC(w.year, w.month - 1, w.day + 1));
  return dayStart(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone);
}

/** Days in `month` (1-12) of `year` (Gregorian). */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

