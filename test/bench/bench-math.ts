// Small helpers every bench prints with: the median of a sample and a fixed-point number.

/** The median of `xs` (the mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** `n` with `digits` decimals (default 1). */
export function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}
