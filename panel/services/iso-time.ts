// ISO 8601 timestamps with an explicit numeric offset (the host's local offset), as the spec's examples show.

/** `2026-01-31T23:59:59+02:00` for `date` in the host's time zone (`+00:00` under UTC). */
export function isoWithOffset(date: Date): string {
  const offsetMin = -date.getTimezoneOffset();
  const local = new Date(date.getTime() + offsetMin * 60_000);
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local.toISOString().slice(0, 19)}${sign}${hh}:${mm}`;
}
