// Reads the per-file durations `file-times-reporter.mjs` wrote: the slowest files of a tier, for test/run.ts to print.
import { readFileSync } from 'node:fs';

/**
 * The `count` slowest files of the reporter's output (`<ms>\t<file>` lines, slowest first) as `  12.3 s  file` lines,
 * each file named by `name` (the runner names a compiled test by its source).
 */
export function slowestFiles(text: string, count: number, name: (file: string) => string = (file) => file): string[] {
  return text.split('\n').filter(Boolean).slice(0, count).map((line) => {
    const [ms, file] = line.split('\t');
    return `${(Number(ms) / 1000).toFixed(1).padStart(7)} s  ${name(file)}`;
  });
}

/**
 * CPU seconds (user + system) of this process's reaped descendants so far (`cutime + cstime` of /proc/self/stat;
 * Linux counts a grandchild in its parent's once reaped, so a tier's test files all land here). null off Linux.
 */
export function childrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields from the state (3rd of the whole line): cutime and cstime are the 16th and 17th of the line
    return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** `sysconf(_SC_CLK_TCK)`: 100 on every Linux the tests run on. */
const CLOCK_TICKS = 100;
