// `vpnhost panel firewall-reset`: the escape hatch — removes every firewall rule and chain the panel owns, offline.
import { parseArgs } from 'node:util';
import { ExecaRunner } from '../dataplane/linux/runner.ts';
import { resetOwnedRules } from '../dataplane/linux/owned-rules.ts';

export const FIREWALL_RESET_HELP = `usage: vpnhost panel firewall-reset [--dry-run]

Removes every iptables and ip6tables rule and chain the panel owns, in every table, without starting the panel:
the VPNHOST-* chains (mangle VPNHOST-MARK, nat VPNHOST-POST, filter VPNHOST-FWD, ...), the jumps to them from
the built-in chains, and any rule tagged with a "vpnhost:" comment. Rules of other software are left untouched.
Prints what it removed. For an operator locked out of the panel by its own rules; the next
\`vpnhost panel serve\` (or PUT /system/reload) puts back the rules the stored servers need.

  --dry-run    only print what would be removed
  -h, --help   this text

Needs root (iptables). Exit code 0 when done (also when nothing was owned), 1 when a tool failed.
`;

/** Runs `firewall-reset`; resolves to the exit code. */
export async function firewallResetCommand(argv: string[], runner = new ExecaRunner()): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(FIREWALL_RESET_HELP);
    return 0;
  }
  const dryRun = values['dry-run'] ?? false;
  const results = await resetOwnedRules(runner, { dryRun });
  let total = 0;
  for (const result of results) {
    if (result.skipped) {
      process.stderr.write(`${result.family}: skipped (${result.skipped})\n`);
      continue;
    }
    for (const line of result.removed) process.stdout.write(`${result.family} ${dryRun ? 'would remove' : 'removed'} ${line}\n`);
    total += result.rules + result.chains;
  }
  if (results.every((r) => r.skipped)) {
    process.stderr.write('firewall-reset: neither iptables-save nor ip6tables-save could run\n');
    return 1;
  }
  process.stdout.write(
    total === 0
      ? 'nothing to remove: no rule or chain of the panel found\n'
      : `${dryRun ? 'would remove' : 'removed'} ${results.reduce((n, r) => n + r.rules, 0)} rules and ${results.reduce((n, r) => n + r.chains, 0)} chains\n`,
  );
  return 0;
}
