// `vpnhost demo` (what `npm start` runs): its flags, and the two listening addresses checked before anything heavy is
// loaded, so a taken port is reported at once with the flags that change it; then the demo itself (demo-run.ts).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkDemoAddresses, explainListenError, type DemoAddress } from './demo-ports.ts';

const HELP = `usage: vpnhost demo [--data DIR] [--panel-listen HOST:PORT] [--platform-listen HOST:PORT]
       npm start -- [the same flags]

Runs a panel (simulated data plane) and the hosting platform (embedded task queue) in one process.
On first start it creates a WireGuard server on the panel, registers the panel on the platform as location
'local', adds a sample VpnProduct, a demo customer with a provisioned service and an unpaid demo invoice;
a restart on the same data finds them and makes nothing twice. Every start prints fresh credentials: a panel
access hash for 127.0.0.1, a platform admin token, and web logins (an admin, and the demo customer).

  --data DIR                  data directory (default ./data; env VPNHOST_DEMO_DATA)
  --panel-listen HOST:PORT    panel address (default 127.0.0.1:8080; env VPNHOST_PANEL_LISTEN)
  --platform-listen HOST:PORT platform address (default 127.0.0.1:8090; env VPNHOST_PLATFORM_LISTEN)
                              (port 0 picks a free port; a port in use is reported before anything starts)
`;

/** Runs the demo until SIGINT/SIGTERM; resolves to the exit code. */
export async function demoCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      'panel-listen': { type: 'string' },
      'platform-listen': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const addresses: DemoAddress[] = [
    { flag: '--panel-listen', listen: values['panel-listen'] ?? process.env.VPNHOST_PANEL_LISTEN ?? '127.0.0.1:8080' },
    { flag: '--platform-listen', listen: values['platform-listen'] ?? process.env.VPNHOST_PLATFORM_LISTEN ?? '127.0.0.1:8090' },
  ];
  await checkDemoAddresses(addresses);
  const { runDemo } = await import('./demo-run.ts');
  return runDemo({
    dataDir: resolve(values.data ?? process.env.VPNHOST_DEMO_DATA ?? 'data'),
    panelListen: addresses[0].listen,
    platformListen: addresses[1].listen,
    explain: (error) => explainListenError(error, addresses),
  });
}
