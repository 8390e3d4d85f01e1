// A node:test reporter that writes, per test file, the summed duration of its top-level tests (one `ms<TAB>file` line
// each). Plain JavaScript: node loads reporters before `--import tsx` applies.
import { relative } from 'node:path';

/**
 * Sums the durations of each file's top-level tests and suites (what the file spent in its tests; its process
 * start and imports are not counted) and yields the files, slowest first, as `<ms>\t<file relative to cwd>` lines.
 * `test/run.ts` prints each tier's slowest files from it.
 * @param {AsyncIterable<{ type: string, data: { nesting?: number, file?: string, details?: { duration_ms?: number } } }>} source
 */
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0 || !event.data.file) continue;
    const file = relative(process.cwd(), event.data.file);
    perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  for (const [file, ms] of [...perFile].sort((a, b) => b[1] - a[1])) yield `${Math.round(ms)}\t${file}\n`;
}
