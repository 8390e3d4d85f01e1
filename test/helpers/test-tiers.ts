// The test tiers and which of them `npm test` runs: those needing nothing from the host by default, the rest when asked or in CI.

/** One tier of `npm test`. */
export interface Tier {
  name: string;
  dir: string;
  concurrency: number;
  /** Longest one test (or suite) may run before it fails as cancelled, so a hang costs minutes, not the tier. */
  testTimeoutMin: number;
  /** What the tier takes from the host; such a tier runs only when asked, and always in CI. */
  needs?: string;
  /** The variable that asks for it (`1` or `true`). */
  env?: string;
  /**
   * The tier this one runs at the same time as when both are selected: pairs where one mostly waits (on daemons,
   * servers, a browser) while the other computes, so that two cores stay busy.
   */
  alongside?: string;
  /**
   * Files started before the others, longest first (paths from the repository root, as `.ts`): with a few files far
   * longer than the rest, starting them last would leave one slot running alone at the end of the tier.
   */
  startFirst?: readonly string[];
}

export const TIERS: readonly Tier[] = [
  { name: 'unit', dir: 'test/unit', concurrency: 2, testTimeoutMin: 5 },
  { name: 'contract', dir: 'test/contract', concurrency: 1, testTimeoutMin: 10, alongside: 'unit' },
  { name: 'integration', dir: 'test/integration', concurrency: 3, testTimeoutMin: 10 },
  {
    name: 'system', dir: 'test/system', concurrency: 3, testTimeoutMin: 20, env: 'VPNHOST_TEST_SYSTEM', alongside: 'integration',
    needs: 'root, network namespaces, iptables, tc and the daemons of .ci/install-system-deps.sh',
    // the longest files of an idle CI run (2026-11-27: 40-80 s each; most others take under 20 s)
    startFirst: [
      'test/system/panel-dataplane-policy.test.ts', 'test/system/platform-crash.test.ts', 'test/system/dataplane-linux.test.ts',
      'test/system/firewall-linux.test.ts', 'test/system/shaping-iperf.test.ts', 'test/system/panel-concurrency.test.ts',
      'test/system/statistics-wireguard.test.ts', 'test/system/platform-ha.test.ts',
    ],
  },
  // Chromium runs alone: beside the system tier its iptables-heavy suites took twice as long (system + browser 486 s
  // against 389 + 115 s), beside the integration tier both slowed (405 s against 279 + 115 s)
  { name: 'browser', dir: 'test/browser', concurrency: 1, testTimeoutMin: 10, env: 'VPNHOST_TEST_BROWSER', needs: 'Chromium at /usr/bin/chromium' },
];

/** What to run: the tiers in order, the ones left out by default (to name them), or an argument error. */
export interface TierSelection {
  run: Tier[];
  skipped: Tier[];
  error?: string;
}

/**
 * Chooses the tiers from the arguments and environment: named tiers run alone; otherwise every tier that needs
 * nothing from the host, plus each other tier when `--all` is given, its variable is `1`/`true`, or `CI=true`.
 */
export function selectTiers(args: readonly string[], env: Record<string, string | undefined>, tiers: readonly Tier[] = TIERS): TierSelection {
  const all = args.includes('--all');
  const named = args.filter((a) => a !== '--all');
  const unknown = named.filter((name) => !tiers.some((tier) => tier.name === name));
  if (unknown.length) {
    return { run: [], skipped: [], error: `unknown tier: ${unknown.join(', ')} (tiers: ${tiers.map((t) => t.name).join(', ')}; --all runs every tier)` };
  }
  if (named.length) return { run: tiers.filter((t) => named.includes(t.name)), skipped: [] };
  const asked = (tier: Tier) => !tier.needs || all || env.CI === 'true' || (tier.env !== undefined && ['1', 'true'].includes(env[tier.env] ?? ''));
  return { run: tiers.filter(asked), skipped: tiers.filter((t) => !asked(t)) };
}

/** The line naming a skipped tier and how to run it. */
export function skippedNotice(tier: Tier): string {
  return `skipped tier: ${tier.name} (needs ${tier.needs}): run it with \`npm test -- ${tier.name}\` or \`${tier.env}=1 npm test\`; ` +
    '`npm test -- --all` runs every tier; with CI=true it always runs';
}

/**
 * The selected tiers in phases, in order: phases run one after another, the tiers of one phase at the same time (a
 * tier joins the phase of the tier it runs `alongside` when that one is selected too).
 */
export function phasesOf(tiers: readonly Tier[]): Tier[][] {
  const phases: Tier[][] = [];
  for (const tier of tiers) {
    const partner = tier.alongside === undefined ? undefined : phases.find((phase) => phase.some((t) => t.name === tier.alongside));
    if (partner) partner.push(tier);
    else phases.push([tier]);
  }
  return phases;
}

/** The tier's files in the order they start: its `startFirst` files (those present) in their order, then the rest. */
export function startOrder(tier: Tier, files: readonly string[]): string[] {
  const first = (tier.startFirst ?? []).filter((file) => files.includes(file));
  return [...first, ...files.filter((file) => !first.includes(file))];
}
