// Pure parsers of `ip -j addr show` and `ip -j route show` (JSON): the networks the host already uses.
import type { HostNetwork } from '../wireguard/driver.ts';

interface AddrJson {
  ifname?: string;
  addr_info?: Array<{ local?: string; prefixlen?: number }>;
}

interface RouteJson {
  dst?: string;
  dev?: string;
}

/** Every address of every link in `ip -j addr show` output, as `local/prefixlen` with its link. */
export function parseHostAddresses(text: string): HostNetwork[] {
  const links = parseArray<AddrJson>(text);
  return links.flatMap((link) =>
    (link.addr_info ?? [])
      .filter((a) => a.local && typeof a.prefixlen === 'number')
      .map((a): HostNetwork => ({ cidr: `${a.local}/${a.prefixlen}`, source: 'address', dev: link.ifname ?? null })),
  );
}

/**
 * Route destinations of `ip -j [-4|-6] route show` output; `default` (and `/0`) routes are left out, a bare
 * destination gets a host prefix (`/32` or `/128`).
 */
export function parseHostRoutes(text: string): HostNetwork[] {
  return parseArray<RouteJson>(text)
    .filter((r) => typeof r.dst === 'string' && r.dst !== 'default' && !r.dst.endsWith('/0'))
    .map((r): HostNetwork => ({
      cidr: r.dst!.includes('/') ? r.dst! : `${r.dst}/${r.dst!.includes(':') ? 128 : 32}`,
      source: 'route',
      dev: r.dev ?? null,
    }));
}

function parseArray<T>(text: string): T[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  const value = JSON.parse(trimmed) as unknown;
  return Array.isArray(value) ? (value as T[]) : [];
}
