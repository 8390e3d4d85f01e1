// Test entry (`npm test`): runs every tier with node's test runner and prints one closing count line.
// Tiers run one after another; system tests run one file at a time (they share /var/run/wireguard and iptables).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
/** `testTimeoutMin`: longest one test (or suite) may run before it fails as cancelled, so a hang costs minutes, not the tier. */
const tiers: Array<{ name: string; dir: string; concurrency: number; testTimeoutMin: number }> = [
  { name: 'unit', dir: 'test/unit', concurrency: 2, testTimeoutMin: 5 },
  { name: 'contract', dir: 'test/contract', concurrency: 1, testTimeoutMin: 10 },
  { name: 'integration', dir: 'test/integration', concurrency: 2, testTimeoutMin: 10 },
  { name: 'system', dir: 'test/system', concurrency: 2, testTimeoutMin: 20 },
  { name: 'browser', dir: 'test/browser', concurrency: 1, testTimeoutMin: 10 },
];

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

const only = process.argv.slice(2);
const unknown = only.filter((name) => !tiers.some((tier) => tier.name === name));
if (unknown.length) {
  process.stderr.write(`unknown tier: ${unknown.join(', ')} (tiers: ${tiers.map((t) => t.name).join(', ')})\n`);
  process.exit(2);
}
/** Longest any one tier may run (`VPNHOST_TIER_TIMEOUT_MIN`, default 40 minutes). */
const TIER_TIMEOUT_MS = Number(process.env.VPNHOST_TIER_TIMEOUT_MIN ?? 40) * 60_000;
const tapDir = mkdtempSync(join(tmpdir(), 'vpnhost-test-'));
let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;

for (const tier of tiers) {
  if (only.length && !only.includes(tier.name)) continue;
  const files = findTests(join(root, tier.dir)).sort();
  if (files.length === 0) continue;
  const tap = join(tapDir, `${tier.name}.tap`);
  process.stdout.write(`\n== ${tier.name} tier: ${files.length} file(s)\n`);
  const result = spawnSync(
    process.execPath,
    [
      '--import', 'tsx', '--test',
      `--test-concurrency=${tier.concurrency}`,
      `--test-timeout=${tier.testTimeoutMin * 60_000}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${tap}`,
      ...files.map((f) => relative(root, f)),
    ],
    // A tier that hangs (a test file whose process never exits) is stopped instead of eating CI's whole budget.
    { cwd: root, stdio: 'inherit', env: process.env, timeout: TIER_TIMEOUT_MS, killSignal: 'SIGTERM' },
  );
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
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

function sumOf(text: string, label: string): number {
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^# ${label} (\\d+)$`, 'gm'))) total += Number(match[1]);
  return total;
}

if (failed > 0) exitCode = 1;
process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(exitCode);
