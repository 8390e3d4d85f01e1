// The networks the host already uses (links, routes, the panel's listen address): tunnel subnets must stay clear of them.
import type { Driver, HostNetwork } from '../dataplane/wireguard/driver.ts';
import { cidrsOverlap, parseCidr, parseIp, type Cidr } from '../schemas/ip.ts';

/** A snapshot of the host's networks, with the panel's own WireGuard interfaces left out. */
export interface HostNetworkView {
  /** The host network `cidr` overlaps (its `ip` text), or null when none does. */
  overlapping(cidr: Cidr): string | null;
}

/** Options of {@link HostNetworkReader}. */
export interface HostNetworkReaderOptions {
  /** The address the panel listens on; an unspecified one (`0.0.0.0`, `::`) adds nothing, the links cover it. */
  listenAddress?: string | null;
  /** How long a read is reused by {@link HostNetworkReader.cached} (default 1000 ms). */
  ttlMs?: number;
  /** Milliseconds since the epoch (default `Date.now`; the panel passes its clock). */
  now?: () => number;
}

/**
 * Reads {@link Driver.hostNetworks} and adds the panel's listen address as a host route. Server changes read fresh;
 * account changes may reuse a read younger than `ttlMs` (a peer address lies in its server's subnet, which was
 * checked fresh, so the cache only bounds the cost of a burst of account creations).
 */
export class HostNetworkReader {
  private last: { at: number; networks: Promise<HostNetwork[]> } | null = null;
  /** The view {@link cached} built last: reused while the read and the own interfaces are the same. */
  private lastView: { networks: HostNetwork[]; own: string; view: HostNetworkView } | null = null;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly driver: Driver, private readonly opts: HostNetworkReaderOptions = {}) {
    this.ttlMs = opts.ttlMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** A fresh view; `ownInterfaces` (the panel's server interfaces) are not counted as host networks. */
  async fresh(ownInterfaces: Iterable<string>): Promise<HostNetworkView> {
    this.last = { at: this.now(), networks: this.driver.hostNetworks() };
    return this.view(await this.last.networks, ownInterfaces);
  }

  /** Like {@link fresh}, reusing a read younger than the TTL. */
  async cached(ownInterfaces: string[]): Promise<HostNetworkView> {
    if (!this.last || this.now() - this.last.at > this.ttlMs) return this.fresh(ownInterfaces);
    const networks = await this.last.networks.catch(() => null);
    if (!networks) return this.fresh(ownInterfaces);
    const own = ownInterfaces.join('\n');
    if (this.lastView?.networks !== networks || this.lastView.own !== own) {
      this.lastView = { networks, own, view: this.view(networks, ownInterfaces) };
    }
    return this.lastView.view;
  }

  private view(networks: HostNetwork[], ownInterfaces: Iterable<string>): HostNetworkView {
    const own = new Set(ownInterfaces);
    const parsed = networks
      .filter((n) => n.dev === null || !own.has(n.dev))
      .map((n) => ({ text: n.cidr, cidr: parseCidr(n.cidr) }))
      .filter((n): n is { text: string; cidr: Cidr } => n.cidr !== null);
    const listen = listenCidr(this.opts.listenAddress ?? null);
    if (listen) parsed.push({ text: `${listen.text} (panel listen address)`, cidr: listen.cidr });
    return { overlapping: (cidr) => parsed.find((n) => cidrsOverlap(n.cidr, cidr))?.text ?? null };
  }
}

/** The listen address as a host CIDR; null when absent, unparsable or unspecified (all-zero). */
function listenCidr(address: string | null): { text: string; cidr: Cidr } | null {
  if (!address) return null;
  const bytes = parseIp(address.replace(/^\[(.*)\]$/, '$1'));
  if (!bytes || bytes.every((b) => b === 0)) return null;
  return { text: address, cidr: { bytes, prefix: bytes.length * 8, version: bytes.length === 4 ? 4 : 6 } };
}
