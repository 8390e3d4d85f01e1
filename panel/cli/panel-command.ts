// `vpnhost panel ...`: serve the panel, manage access hashes, install a license.
import { accessHashCommand } from './access-hash-command.ts';
import { panelLicenseCommand } from './panel-license-install.ts';
import { parseServeOptions, SERVE_HELP } from './serve-options.ts';

export const PANEL_HELP = `usage: vpnhost panel <command> [...]

  serve          run the panel (REST API under /api/v1)
  access-hash    create, list and delete API access hashes
  license        install a license key

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
