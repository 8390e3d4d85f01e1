// `vpnhost` command dispatcher (the only place that reaches both halves): the first word picks the command family, each family parses its own flags.

type Family = (argv: string[]) => Promise<number>;

const families: Record<string, { summary: string; load: () => Promise<Family> }> = {
  panel: { summary: 'run and administer a VPN panel (serve, access-hash, license)', load: async () => (await import('../../panel/cli/panel-command.ts')).panelCommand },
  license: { summary: 'vendor tools: keygen, issue', load: async () => (await import('../../panel/cli/license-command.ts')).licenseCommand },
  platform: { summary: 'run and administer the hosting platform (serve, admin-token, worker)', load: async () => (await import('../../module/platform/cli.ts')).platformCommand },
  demo: { summary: 'run panel and platform together on embedded defaults (what `npm start` runs)', load: async () => (await import('./demo-command.ts')).demoCommand },
};

/** Usage text listing the command families. */
export function usage(): string {
  const lines = Object.entries(families).map(([name, f]) => `  vpnhost ${name.padEnd(9)} ${f.summary}`);
  return ['usage: vpnhost <command> [...]', '', ...lines, '', 'Run `vpnhost <command> --help` for its options.'].join('\n');
}

/** Runs the CLI with `argv` (without node and script); resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [word, ...rest] = argv;
  if (!word || word === '--help' || word === '-h' || word === 'help') {
    process.stdout.write(usage() + '\n');
    return word ? 0 : 2;
  }
  const family = families[word];
  if (!family) {
    process.stderr.write(`vpnhost: unknown command '${word}'\n\n${usage()}\n`);
    return 2;
  }
  try {
    return await (await family.load())(rest);
  } catch (err) {
    process.stderr.write(`vpnhost ${word}: ${(err as Error).message}\n`);
    return 1;
  }
}
