// The host's default route (source address and outgoing interface): external_ip and NAT egress of new servers.
import type { CommandRunner } from './linux/runner.ts';

/** What the default route says; null parts are unknown. */
export interface DefaultRoute {
  /** Source address of the default route (the address peers' traffic leaves with). */
  address: string | null;
  /** Outgoing interface of the default route, e.g. `eth0`. */
  interface: string | null;
}

/** Finds the default route. */
export interface DefaultRouteProbe {
  probe(): Promise<DefaultRoute>;
}

/** A probe with a fixed answer (simulated data plane, demo, tests): TEST-NET-3 address on `eth0`. */
export function fixedRouteProbe(route: DefaultRoute = { address: '203.0.113.1', interface: 'eth0' }): DefaultRouteProbe {
  return { probe: async () => ({ ...route }) };
}

/**
 * Linux probe. Runs `ip -j -4 route show default` and takes the first route with a `dev`; its `prefsrc` is the
 * address, else the first IPv4 `local` of `ip -j -4 addr show dev <dev>`. No default route → both null.
 */
export class LinuxDefaultRouteProbe implements DefaultRouteProbe {
  constructor(private readonly runner: CommandRunner) {}

  async probe(): Promise<DefaultRoute> {
    const routes = parseJson<Array<{ dev?: string; prefsrc?: string }>>(
      (await this.runner.run('ip', ['-j', '-4', 'route', 'show', 'default'])).stdout,
    );
    const route = routes.find((r) => typeof r.dev === 'string');
    if (!route?.dev) return { address: null, interface: null };
    if (route.prefsrc) return { address: route.prefsrc, interface: route.dev };
    const links = parseJson<Array<{ addr_info?: Array<{ family?: string; local?: string }> }>>(
      (await this.runner.run('ip', ['-j', '-4', 'addr', 'show', 'dev', route.dev])).stdout,
    );
    const local = links.flatMap((l) => l.addr_info ?? []).find((a) => a.family === 'inet' && a.local)?.local ?? null;
    return { address: local, interface: route.dev };
  }
}

function parseJson<T extends unknown[]>(text: string): T {
  const trimmed = text.trim();
  if (!trimmed) return [] as unknown as T;
  const value = JSON.parse(trimmed) as unknown;
  return (Array.isArray(value) ? value : []) as T;
}
