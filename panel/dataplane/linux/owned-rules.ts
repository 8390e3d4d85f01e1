// Removes every iptables/ip6tables rule, chain and ipset the panel owns (the escape hatch behind `vpnhost panel firewall-reset`).
import { parseIptablesSave } from '../render/parse-iptables-save.ts';
import { renderOwnedRulesReset, type OwnedRulesReset } from '../render/owned-rules-reset.ts';
import type { CommandRunner } from './runner.ts';

/** The reset of one address family. */
export interface FamilyReset extends OwnedRulesReset {
  family: 'IPv4' | 'IPv6';
  /** Whether the payload was written (false on a dry run, or when nothing was owned). */
  applied: boolean;
  /** Built-in filter chains whose DROP/REJECT policy was (or would be) set to ACCEPT (`acceptPolicies`). */
  policies: string[];
  /** Set when the family's tools are missing or unusable; nothing was read or written for it. */
  skipped?: string;
}

/** Everything a reset did. */
export interface OwnedStateReset {
  families: FamilyReset[];
  /** `vpnhost-*` ipsets destroyed (or that would be); empty when `ipset` is not installed. */
  sets: string[];
}

/** Options of {@link resetOwnedRules}. */
export interface ResetOptions {
  /** Only read and report. */
  dryRun?: boolean;
  /** Also set the filter table's INPUT, FORWARD and OUTPUT policies to ACCEPT where they are DROP or REJECT. */
  acceptPolicies?: boolean;
}

/** Prefix of every ipset the panel owns. */
const OWNED_SET_PREFIX = 'vpnhost-';

const FAMILIES = [
  { family: 'IPv4', save: 'iptables-save', restore: 'iptables-restore', tool: 'iptables' },
  { family: 'IPv6', save: 'ip6tables-save', restore: 'ip6tables-restore', tool: 'ip6tables' },
] as const;

/**
 * For IPv4 and IPv6: reads every table with `iptables-save` / `ip6tables-save` and writes the
 * {@link renderOwnedRulesReset} payload with `iptables-restore --noflush` / `ip6tables-restore --noflush` (atomic
 * per table); with `acceptPolicies`, `iptables -P <chain> ACCEPT` for each built-in filter chain whose policy drops.
 * Then destroys the `vpnhost-*` sets `ipset list -n` names (no longer referenced once the rules are gone). With
 * `dryRun` it only reads. A family whose save tool cannot run is reported as skipped; a missing `ipset` is no error.
 */
export async function resetOwnedRules(runner: CommandRunner, opts: ResetOptions = {}): Promise<OwnedStateReset> {
  const families: FamilyReset[] = [];
  for (const { family, save, restore, tool } of FAMILIES) {
    const dump = await runner.run(save, [], { allowFailure: true });
    if (dump.exitCode !== 0) {
      const reason = dump.stderr.trim().split('\n').pop() || `exit code ${dump.exitCode}`;
      families.push({ family, payload: null, removed: [], rules: 0, chains: 0, applied: false, policies: [], skipped: `${save}: ${reason}` });
      continue;
    }
    const reset = renderOwnedRulesReset(parseIptablesSave(dump.stdout));
    const apply = reset.payload !== null && !opts.dryRun;
    if (apply) await runner.run(restore, ['--noflush'], { input: reset.payload! });
    const policies = opts.acceptPolicies ? droppingPolicies(dump.stdout) : [];
    if (!opts.dryRun) for (const chain of policies) await runner.run(tool, ['-t', 'filter', '-P', chain, 'ACCEPT']);
    families.push({ family, ...reset, applied: apply, policies });
  }
  const listed = await runner.run('ipset', ['list', '-n'], { allowFailure: true });
  const sets = listed.exitCode === 0 ? listed.stdout.split('\n').map((l) => l.trim()).filter((l) => l.startsWith(OWNED_SET_PREFIX)) : [];
  if (!opts.dryRun) for (const set of sets) await runner.run('ipset', ['destroy', set]);
  return { families, sets };
}

/** Built-in filter chains whose policy is not ACCEPT, from `iptables-save` text. */
function droppingPolicies(saveText: string): string[] {
  const filter = /^\*filter\n([\s\S]*?)^COMMIT$/m.exec(saveText)?.[1] ?? '';
  return [...filter.matchAll(/^:(INPUT|FORWARD|OUTPUT) (DROP|REJECT) /gm)].map((m) => m[1]);
}
