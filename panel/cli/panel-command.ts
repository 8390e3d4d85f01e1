// `vpnhost panel ...`: serve the panel, manage access hashes, install a license, reset its firewall rules.
import { accessHashCommand } from './access-hash-command.ts';
import { panelLicenseCommand } from './panel-license-install.ts';
import { parseServeOptions, SERVE_HELP } from './serve-options.ts';

export const PANEL_HELP = `usage: vpnhost panel <command> [...]

  serve          run the panel (REST API under /api/v1)
  access-hash    create, list and delete API access hashes
  license        install a license key
  firewall-reset remove every firewall rule and chain the panel owns (escape hatch; no server started)
  backup-key     set the backup passphrase; unlock an archive's data key on a new machine; sign an older archive

Run \`vpnhost panel <command> --help\` for its options.
`;

/** Runs `vpnhost panel <command>`; resolves to the exit code. */
export async function panelCommand(argv: string[]): Promise<number> {
  const [word, ...rest] = argv;
  switch (word) {
    case 'serve': {
      const parsed = parseServeOptions(rest);
      if (parsed.help) {
        process.stdout.write(SERVE_HELP);
        return 0;
      }
      const { servePanel } = await import('../server.ts');
      return servePanel(parsed.options);
    }
    case 'access-hash':
      return accessHashCommand(rest);
    case 'license':
      return panelLicenseCommand(rest);
    case 'firewall-reset':
      return (await import('./firewall-reset-command.ts')).firewallResetCommand(rest);
    case 'backup-key':
      return (await import('./backup-key-command.ts')).backupKeyCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(PANEL_HELP);
      return word ? 0 : 2;
    default:
      process.stderr.write(`vpnhost panel: unknown command '${word}'\n\n${PANEL_HELP}`);
      return 2;
  }
}
