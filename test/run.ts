// Test entry (`npm test`): runs the selected tiers with node's test runner and prints one closing count line.
// Tiers run one after another. By default only the tiers that need nothing from the host (unit, contract,
// integration); system and browser run when asked (`npm test -- system`, `--all`, VPNHOST_TEST_SYSTEM=1,
// VPNHOST_TEST_BROWSER=1) and always with CI=true. The tests run from a compiled copy of the tree (`.build`, made first
// by esbuild in a few seconds): node then loads plain JavaScript instead of going through the tsx loader in each of the
// several hundred processes a run starts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { compileTree, removeTree, sourcePathOf } from './helpers/compiled-tree.ts';
import { childrenCpuSeconds, slowestFiles } from './helpers/file-times.ts';
import { selectTiers, skippedNotice } from './helpers/test-tiers.ts';

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
    return entry.endsWith('.test.js') ? [path] : [];
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

for (const tier of selection.run) {
  const files = findTests(join(tree.root, tier.dir)).sort();
  if (files.length === 0) continue;
  const tap = join(tapDir, `${tier.name}.tap`);
  const times = join(tapDir, `${tier.name}.times`);
  const startedAt = Date.now();
  const cpuBefore = childrenCpuSeconds();
  process.stdout.write(`\n== ${tier.name} tier: ${files.length} file(s)\n`);
  const result = spawnSync(
    process.execPath,
    [
      // stack traces name the TypeScript sources and their lines (esbuild's linked source maps)
      '--enable-source-maps', '--test',
      `--test-concurrency=${tier.concurrency}`,
      `--test-timeout=${tier.testTimeoutMin * 60_000}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${tap}`,
      `--test-reporter=${join(tree.root, 'test/helpers/file-times-reporter.mjs')}`, `--test-reporter-destination=${times}`,
      ...files.map((f) => relative(root, f)),
    ],
    // A tier that hangs (a test file whose process never exits) is stopped instead of eating CI's whole budget.
    { cwd: root, stdio: 'inherit', env: process.env, timeout: TIER_TIMEOUT_MS, killSignal: 'SIGTERM' },
  );
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  // where the tier's time went: its wall time and its slowest files (the sum of each file's top-level tests)
  const slowest = existsSync(times) ? slowestFiles(readFileSync(times, 'utf8'), SLOWEST_SHOWN, (file) => sourcePathOf(join(root, file), tree, root)) : [];
  // CPU beside wall time tells waiting from computing: cpu/wall near the core count means the tier is CPU-bound
  const wall = (Date.now() - startedAt) / 1000;
  const cpuAfter = childrenCpuSeconds();
  const cpu = cpuBefore === null || cpuAfter === null ? '' : `, ${(cpuAfter - cpuBefore).toFixed(0)} s CPU (${((cpuAfter - cpuBefore) / wall).toFixed(2)} cores busy)`;
  process.stdout.write(`\n${tier.name} tier: ${wall.toFixed(0)} s wall${cpu}; slowest files:\n${slowest.join('\n')}\n`);
  const count = (label: string) => sumOf(text, label);
  const tierFailed = count('fail') + count('cancelled');
  passed += count('pass');
  failed += tierFailed;
  skipped += count('skipped') + count('todo');
  if (result.status !== 0) {
    exitCode = 1;
    // A runner that died (signal, crash, no TAP summary) without a failing test still counts as one failure.
    if (tierFailed === 0) {
      failed += 1;
      const how = result.error?.message ?? (result.signal ? `signal ${result.signal}` : `exit status ${result.status}`);
      process.stdout.write(`\n${tier.name} tier: the test runner failed (${how})\n`);
    }
  }
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
