// Small helpers every bench uses: the median of a sample, a fixed-point number, a host of a /16, the prerequisites check.
import { hasTool, isRoot } from '../helpers/require-tools.ts';

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

/** What a bench needs that this host lacks: the tools not on PATH, and root; the bench prints it and exits 2. */
export function benchNeeds(name: string, tools: string[]): boolean {
  const missing = tools.filter((tool) => !hasTool(tool));
  if (!isRoot()) missing.push('root privileges');
  if (missing.length) process.stderr.write(`${name} bench needs: ${missing.join(', ')}\n`);
  return missing.length > 0;
}

/** Host `i` (0-based) of the /16 `<prefix>.0.0`, skipping .0 and .255 of each /24 and the server's .1. */
export function hostIp16(prefix: string, i: number): string {
  const n = i + 2;
  return `${prefix}.${Math.floor(n / 254)}.${(n % 254) + 1}`;
}
