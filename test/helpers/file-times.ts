// Reads the per-file durations `file-times-reporter.mjs` wrote: the slowest files of a tier, for test/run.ts to print.

/** The `count` slowest files of the reporter's output (`<ms>\t<file>` lines, slowest first) as `  12.3 s  file` lines. */
export function slowestFiles(text: string, count: number): string[] {
  return text.split('\n').filter(Boolean).slice(0, count).map((line) => {
    const [ms, file] = line.split('\t');
    return `${(Number(ms) / 1000).toFixed(1).padStart(7)} s  ${file}`;
  });
}
