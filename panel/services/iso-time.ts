// ISO 8601 timestamps with an explicit numeric offset (the host's local offset), as the spec's examples show.

/**
 * `2026-01-31T23:59:59+02:00` for `date` in the host's time zone (`+00:00` under UTC); with `millis`,
 * `2026-01-31T23:59:59.123+02:00` (fractional seconds, e.g. a backup's `creation_date`).
 */
export function isoWithOffset(date: Date, opts: { millis?: boolean } = {}): string {
  const offsetMin = -date.getTimezoneOffset();
  const local = new Date(date.getTime() + offsetMin * 60_000);
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local.toISOString().slice(0, opts.millis ? 23 : 19)}${sign}${hh}:${mm}`;
}
