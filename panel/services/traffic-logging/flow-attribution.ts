// Maps a flow's addresses to the account (name, tunnel address) that owns them.
import type { FlowOwnerRow } from '../../store/repositories/traffic-logging.ts';
import { canonicalIp } from '../../schemas/ip.ts';
import type { FlowEvent, FlowRecord } from './flow-event.ts';

interface Owner {
  account: string;
  address: string;
}

/** `10.0.1.2` from the stored 32-bit number. */
export function ipv4FromNumber(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * An index from tunnel address (IPv4 and IPv6, canonical text) to account, rebuilt from `load` when older than
 * `maxAgeMs` (default 5 s), so accounts added or deleted while logging runs are picked up without a restart.
 */
export class FlowAttribution {
  private index = new Map<string, Owner>();
  private builtAt = -Infinity;

  constructor(private readonly load: () => FlowOwnerRow[], private readonly maxAgeMs = 5_000, private readonly now: () => number = () => performance.now()) {}

  private refresh(): void {
    if (this.now() - this.builtAt < this.maxAgeMs) return;
    const next = new Map<string, Owner>();
    for (const row of this.load()) {
      const address = ipv4FromNumber(row.ip);
      const owner = { account: row.name, address };
      next.set(address, owner);
      const v6 = row.allowed_ips_ipv6 ? canonicalIp(row.allowed_ips_ipv6.split('/')[0]) : null;
      if (v6) next.set(v6, owner);
    }
    this.index = next;
    this.builtAt = this.now();
  }

  private lookup(ip: string): Owner | undefined {
    return this.index.get(ip) ?? this.index.get(canonicalIp(ip) ?? ip);
  }

  /**
   * The record for `event`: the account whose address opened it (`outgoing`), else — when `incoming` — the
   * account it was addressed to; null when no account is involved.
   */
  attribute(event: FlowEvent, incoming: boolean): FlowRecord | null {
    this.refresh();
    const from = this.lookup(event.src);
    if (from) return { event, account: from.account, address: from.address, outgoing: true };
    if (!incoming) return null;
    const to = this.lookup(event.dst);
    return to ? { event, account: to.account, address: to.address, outgoing: false } : null;
  }
}
