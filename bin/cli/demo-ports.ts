// The demo's two listening addresses, checked before anything starts: a port already taken (or not allowed) is reported
// at once, with the flags that move the demo to free ports, in both the `vpnhost demo` and the `npm start --` form.
import { createServer } from 'node:net';
import { parseListen } from '../../module/platform/listen.ts';

/** One address the demo listens on, and the flag that sets it. */
export interface DemoAddress {
  flag: '--panel-listen' | '--platform-listen';
  listen: string;
}

/** A start the demo refuses before starting anything; `message` says what to do. */
export class DemoAddressError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = 'DemoAddressError';
  }
}

/** Binds `host:port` and releases it; resolves null when that worked, else the error's code. */
function tryBind(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'EUNKNOWN'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** A port near `port` that is free on `host` now (within 50 above it), else 0 (any free port). */
async function freePortNear(host: string, port: number, taken: ReadonlySet<number>): Promise<number> {
  for (let candidate = port + 1; candidate <= Math.min(port + 50, 65535); candidate++) {
    if (!taken.has(candidate) && (await tryBind(host, candidate)) === null) return candidate;
  }
  return 0;
}

/** Why an address cannot be listened on, from the system's error code. */
function reason(code: string): string {
  if (code === 'EADDRINUSE') return 'is already in use (EADDRINUSE): another program, or a demo already running, listens there';
  if (code === 'EACCES') return 'is not allowed (EACCES): ports below 1024 need root';
  if (code === 'EADDRNOTAVAIL') return 'is not an address of this machine (EADDRNOTAVAIL)';
  return `cannot be listened on (${code})`;
}

/** What the user reads: the address, why it cannot be used, and the two commands that start the demo elsewhere. */
export function addressHint(failed: DemoAddress, why: string, suggested: DemoAddress[]): string {
  const flags = suggested.map((a) => `${a.flag} ${a.listen}`).join(' ');
  return `${failed.listen} (${failed.flag}) ${why}.
Start the demo on other addresses:
  npm start -- ${flags}
  vpnhost demo ${flags}
(port 0 picks a free port; the environment variables VPNHOST_PANEL_LISTEN and VPNHOST_PLATFORM_LISTEN work too)`;
}

/** The same addresses with `failed` moved to a free port near it. */
async function suggestion(addresses: DemoAddress[], failed: DemoAddress): Promise<DemoAddress[]> {
  const { host, port } = parseListen(failed.listen);
  const ports = new Set(addresses.map((a) => parseListen(a.listen).port));
  const free = await freePortNear(host, port, ports);
  const bracketed = host.includes(':') ? `[${host}]` : host;
  return addresses.map((a) => (a === failed ? { ...a, listen: `${bracketed}:${free}` } : a));
}

/**
 * Checks that every address parses, that the two differ and that each can be listened on now (port 0 always can);
 * throws DemoAddressError with the hint otherwise. Another program may still take a port before the demo listens:
 * `explainListenError` words that failure the same way.
 */
export async function checkDemoAddresses(addresses: DemoAddress[]): Promise<void> {
  const parsed = addresses.map((a) => ({ a, ...parseAddress(a) }));
  const [first, second] = parsed;
  if (first && second && first.port !== 0 && first.port === second.port && first.host === second.host) {
    throw new DemoAddressError(addressHint(second.a, `is the address of ${first.a.flag} too`, await suggestion(addresses, second.a)), 'EADDRINUSE');
  }
  for (const { a, host, port } of parsed) {
    if (port === 0) continue;
    const code = await tryBind(host, port);
    if (code) throw new DemoAddressError(addressHint(a, reason(code), await suggestion(addresses, a)), code);
  }
}

/** A listen error of the panel or platform as the same hint (when it is one about the address), else the error. */
export async function explainListenError(error: unknown, addresses: DemoAddress[]): Promise<unknown> {
  const code = (error as NodeJS.ErrnoException)?.code;
  const port = (error as { port?: number })?.port;
  if (!code || !['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(code)) return error;
  const failed = addresses.find((a) => parseListen(a.listen).port === port) ?? addresses[0];
  return new DemoAddressError(addressHint(failed, reason(code), await suggestion(addresses, failed)), code);
}

function parseAddress(a: DemoAddress): { host: string; port: number } {
  try {
    return parseListen(a.listen);
  } catch {
    throw new DemoAddressError(`${a.flag} must be HOST:PORT (e.g. 127.0.0.1:8080), got '${a.listen}'`, 'EINVAL');
  }
}
