// `vpnhost panel firewall-reset`: the escape hatch — removes every firewall rule and chain the panel owns, offline.
import { parseArgs } from 'node:util';
import { ExecaRunner, type CommandRunner } from '../dataplane/linux/runner.ts';
import { resetOwnedRules } from '../dataplane/linux/owned-rules.ts';

export const FIREWALL_RESET_HELP = `usage: vpnhost panel firewall-reset [--dry-run] [--accept-policies]

Removes every iptables and ip6tables rule and chain the panel owns, in every table, without starting the panel:
the VPNHOST-* chains (mangle VPNHOST-MARK, nat VPNHOST-POST, filter VPNHOST-FWD, ...), the jumps to them from
the built-in chains, any rule tagged with a "vpnhost:" comment, and the vpnhost-* ipsets. Rules of other software
are left untouched. Prints what it removed. For an operator locked out of the panel by its own rules; the next
\`vpnhost panel serve\` (or PUT /system/reload) puts back the rules the stored servers need.

  --dry-run          only print what would be removed
  --accept-policies  also set the filter table's INPUT, FORWARD and OUTPUT policies to ACCEPT where they drop
  -h, --help         this text

Needs root (iptables). Exit code 0 when done (also when nothing was owned), 1 when a tool failed.
`;

/** Runs `firewall-reset`; resolves to the exit code. */
export async function firewallResetCommand(argv: string[], runner: CommandRunner = new ExecaRunner()): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'dry-run': { type: 'boolean' }, 'accept-policies': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(FIREWALL_RESET_HELP);
    return 0;
  }
  const dryRun = values['dry-run'] ?? false;
  const verb = dryRun ? 'would remove' : 'removed';
  const { families, sets } = await resetOwnedRules(runner, { dryRun, acceptPolicies: values['accept-policies'] ?? false });
  let rules = 0;
  let chains = 0;
  for (const result of families) {
    if (result.skipped) {
      process.stderr.write(`${result.family}: skipped (${result.skipped})\n`);
      continue;
    }
    for (const line of result.removed) process.stdout.write(`${result.family} ${verb} ${line}\n`);
    for (const chain of result.policies) process.stdout.write(`${result.family} ${dryRun ? 'would set' : 'set'} filter ${chain} policy to ACCEPT\n`);
    rules += result.rules;
    chains += result.chains;
  }
  for (const set of sets) process.stdout.write(`${verb} ipset ${set}\n`);
  if (families.every((r) => r.skipped)) {
    process.stderr.write('firewall-reset: neither iptables-save nor ip6tables-save could run\n');
    return 1;
  }
  process.stdout.write(
    rules + chains + sets.length === 0
      ? 'nothing to remove: no rule, chain or set of the panel found\n'
      : `${verb} ${rules} rules, ${chains} chains and ${sets.length} sets\n`,
  );
  return 0;
}
