// Test entry (`npm test`): runs the selected tiers with node's test runner and prints one closing count line.
// Tiers run one after another, except that a tier marked `alongside` another runs at the same time as it (contract with
// unit, browser with system: one mostly waits while the other computes). By default only the tiers that need nothing from the host (unit, contract,
// integration); system and browser run when asked (`npm test -- system`, `--all`, VPNHOST_TEST_SYSTEM=1,
// VPNHOST_TEST_BROWSER=1) and always with CI=true. The tests run from a compiled copy of the tree (`.build`, made first
// by esbuild in a few seconds): node then loads plain JavaScript instead of going through the tsx loader in each of the
// several hundred processes a run starts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { compileTree, removeTree, sourcePathOf } from './helpers/compiled-tree.ts';
import { childrenCpuSeconds, slowestFiles } from './helpers/file-times.ts';
import { phasesOf, selectTiers, skippedNotice, startOrder, type Tier } from './helpers/test-tiers.ts';

const root = new URL('..', import.meta.url).pathname;

function findTests(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return findTests(path);
    return entry.endsWith('.test.ts') ? [path] : [];
  });
}

const selection = selectTiers(process.argv.slice(2), process.env);
if (selection.error) {
  process.stderr.write(`${selection.error}\n`);
  process.exit(2);
}
/** Longest any one tier may run (`VPNHOST_TIER_TIMEOUT_MIN`, default 40 minutes). */
const TIER_TIMEOUT_MS = Number(process.env.VPNHOST_TIER_TIMEOUT_MIN ?? 40) * 60_000;
/** How many of each tier's slowest files are named after it ran. */
const SLOWEST_SHOWN = 15;
const tapDir = mkdtempSync(join(tmpdir(), 'vpnhost-test-'));
let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;
const tree = await compileTree(root);
process.stdout.write(`compiled ${tree.compiled} TypeScript files into ${relative(root, tree.root)}/ in ${(tree.ms / 1000).toFixed(1)} s\n`);

/** What one tier's runner left: its exit, how long it took, its spec output when it ran beside another tier. */
interface TierRun {
  tier: Tier;
  files: number;
  status: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
  wall: number;
}

/**
 * Runs one tier's files in one `node --test`. Alone in its phase it reports to this terminal as it goes; beside another
 * tier its spec output goes to a file printed when the phase ends, so the two tiers' lines do not mix.
 */
function runTier(tier: Tier, files: string[], live: boolean): Promise<TierRun> {
  const startedAt = Date.now();
  const spec = live ? 'stdout' : join(tapDir, `${tier.name}.spec`);
  const child = spawn(
    process.execPath,
    [
      // stack traces name the TypeScript sources and their lines (esbuild's linked source maps)
      '--enable-source-maps', '--test',
      `--test-concurrency=${tier.concurrency}`,
      `--test-timeout=${tier.testTimeoutMin * 60_000}`,
      '--test-reporter=spec', `--test-reporter-destination=${spec}`,
      '--test-reporter=tap', `--test-reporter-destination=${join(tapDir, `${tier.name}.tap`)}`,
      `--test-reporter=${join(tree.root, 'test/helpers/file-times-reporter.mjs')}`, `--test-reporter-destination=${join(tapDir, `${tier.name}.times`)}`,
      ...files.map((f) => relative(root, f)),
    ],
    // A tier that hangs (a test file whose process never exits) is stopped instead of eating CI's whole budget.
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: process.env, timeout: TIER_TIMEOUT_MS, killSignal: 'SIGTERM' },
  );
  return new Promise((resolve) => {
    let error: Error | undefined;
    child.on('error', (e) => (error = e));
    child.on('close', (status, signal) => resolve({ tier, files: files.length, status, signal, error, wall: (Date.now() - startedAt) / 1000 }));
  });
}

/** Prints a finished tier (its buffered spec output first) and adds its counts to the totals. */
function report(run: TierRun, live: boolean): void {
  const { tier } = run;
  const specFile = join(tapDir, `${tier.name}.spec`);
  if (!live) process.stdout.write(`\n== ${tier.name} tier (ran alongside another tier; its output follows)\n${existsSync(specFile) ? readFileSync(specFile, 'utf8') : ''}`);
  const tap = join(tapDir, `${tier.name}.tap`);
  const times = join(tapDir, `${tier.name}.times`);
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  // where the tier's time went: its wall time and its slowest files (the sum of each file's top-level tests)
  const slowest = existsSync(times) ? slowestFiles(readFileSync(times, 'utf8'), SLOWEST_SHOWN, (file) => sourcePathOf(join(root, file), tree, root)) : [];
  process.stdout.write(`\n${tier.name} tier: ${run.wall.toFixed(0)} s wall; slowest files:\n${slowest.join('\n')}\n`);
  const count = (label: string) => sumOf(text, label);
  const tierFailed = count('fail') + count('cancelled');
  passed += count('pass');
  failed += tierFailed;
  skipped += count('skipped') + count('todo');
  if (run.status !== 0) {
    exitCode = 1;
    // A runner that died (signal, crash, no TAP summary) without a failing test still counts as one failure.
    if (tierFailed === 0) {
      failed += 1;
      const how = run.error?.message ?? (run.signal ? `signal ${run.signal}` : `exit status ${run.status}`);
      process.stdout.write(`\n${tier.name} tier: the test runner failed (${how})\n`);
    }
  }
}

for (const phase of phasesOf(selection.run)) {
  // the tier's source files (`test/system/x.test.ts`) in its start order, each run as its compiled `.js`
  const filesOf = (tier: Tier) => startOrder(tier, findTests(join(root, tier.dir)).map((f) => relative(root, f)).sort())
    .map((file) => join(tree.root, file.replace(/\.ts$/, '.js')));
  const tiers = phase.map((tier) => ({ tier, files: filesOf(tier) })).filter((t) => t.files.length > 0);
  if (tiers.length === 0) continue;
  const live = tiers.length === 1;
  const startedAt = Date.now();
  const cpuBefore = childrenCpuSeconds();
  for (const { tier, files } of tiers) process.stdout.write(`\n== ${tier.name} tier: ${files.length} file(s)${live ? '' : ` (alongside ${tiers.filter((t) => t.tier !== tier).map((t) => t.tier.name).join(', ')})`}\n`);
  const runs = await Promise.all(tiers.map(({ tier, files }) => runTier(tier, files, live)));
  for (const run of runs) report(run, live);
  // CPU beside wall time tells waiting from computing: cpu/wall near the core count means the phase is CPU-bound
  const wall = (Date.now() - startedAt) / 1000;
  const cpuAfter = childrenCpuSeconds();
  const cpu = cpuBefore === null || cpuAfter === null ? '' : `, ${(cpuAfter - cpuBefore).toFixed(0)} s CPU (${((cpuAfter - cpuBefore) / wall).toFixed(2)} cores busy)`;
  process.stdout.write(`\n${tiers.map((t) => t.tier.name).join(' + ')}: ${wall.toFixed(0)} s wall${cpu}\n`);
}
rmSync(tapDir, { recursive: true, force: true });
removeTree(tree);

function sumOf(text: string, label: string): number {
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^# ${label} (\\d+)$`, 'gm'))) total += Number(match[1]);
  return total;
}

if (failed > 0) exitCode = 1;
for (const tier of selection.skipped) process.stdout.write(`\n${skippedNotice(tier)}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(exitCode);
