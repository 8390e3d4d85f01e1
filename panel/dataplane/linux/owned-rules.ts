// Removes every iptables/ip6tables rule and chain the panel owns (the escape hatch behind `vpnhost panel firewall-reset`).
import { parseIptablesSave } from '../render/parse-iptables-save.ts';
import { renderOwnedRulesReset, type OwnedRulesReset } from '../render/owned-rules-reset.ts';
import type { CommandRunner } from './runner.ts';

/** The reset of one address family. */
export interface FamilyReset extends OwnedRulesReset {
  family: 'IPv4' | 'IPv6';
  /** Whether the payload was written (false on a dry run, or when nothing was owned). */
  applied: boolean;
  /** Set when the family's tools are missing or unusable; nothing was read or written for it. */
  skipped?: string;
}

const FAMILIES = [
  { family: 'IPv4', save: 'iptables-save', restore: 'iptables-restore' },
  { family: 'IPv6', save: 'ip6tables-save', restore: 'ip6tables-restore' },
] as const;

/**
 * For IPv4 and IPv6: reads every table with `iptables-save` / `ip6tables-save`, and writes the
 * {@link renderOwnedRulesReset} payload with `iptables-restore --noflush` / `ip6tables-restore --noflush` (atomic
 * per table). With `dryRun` only reads. A family whose save tool cannot run is reported as skipped.
 */
export async function resetOwnedRules(runner: CommandRunner, opts: { dryRun?: boolean } = {}): Promise<FamilyReset[]> {
  const out: FamilyReset[] = [];
  for (const { family, save, restore } of FAMILIES) {
    const dump = await runner.run(save, [], { allowFailure: true });
    if (dump.exitCode !== 0) {
      const reason = dump.stderr.trim().split('\n').pop() || `exit code ${dump.exitCode}`;
      out.push({ family, payload: null, removed: [], rules: 0, chains: 0, applied: false, skipped: `${save}: ${reason}` });
      continue;
    }
    const reset = renderOwnedRulesReset(parseIptablesSave(dump.stdout));
    const apply = reset.payload !== null && !opts.dryRun;
    if (apply) await runner.run(restore, ['--noflush'], { input: reset.payload! });
    out.push({ family, ...reset, applied: apply });
  }
  return out;
}
