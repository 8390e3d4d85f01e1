// What the firewall needs of the host, and the engine's counted write path over it.
import { renderFirewallRestore, type RestorePlan } from '../render/firewall-restore.ts';
import type { CountedSnapshot } from '../render/parse-iptables-save-counters.ts';
import type { Family, FirewallStats } from './firewall.ts';
import { snapshot } from './firewall-reads.ts';

/**
 * What the engine needs of the host: the iptables/ip6tables save+restore pair, ipset, sysctl and versions.
 * `LinuxFirewallBackend` runs the real tools; `MemoryFirewallBackend` is an in-memory kernel with their semantics.
 */
export interface FirewallBackend {
  /** `iptables-save -c` (4) or `ip6tables-save -c` (6): every table with counters. */
  save(family: Family): Promise<string>;
  /** `iptables-restore --noflush` / `ip6tables-restore --noflush` with the payload on stdin. */
  restore(family: Family, payload: string): Promise<void>;
  /** `ipset list -n`: names of every set. */
  ipsetNames(): Promise<string[]>;
  /** `ipset save NAME`: the set's create line and entries. */
  ipsetSave(name: string): Promise<string>;
  /** `ipset restore -exist` with the lines on stdin. */
  ipsetRestore(lines: string[]): Promise<void>;
  /** `sysctl -n KEY`. */
  sysctlGet(key: string): Promise<string>;
  /** `sysctl -w KEY=VALUE`. */
  sysctlSet(key: string, value: string): Promise<void>;
  /** `iptables --version` and `ip -V`, first line each. */
  versions(): Promise<{ iptables: string; iproute2: string }>;
  /**
   * `conntrack -D -p PROTO --orig-port-dst PORT [--orig-dst IP]`: forgets the connections of a removed port forward
   * (an established TCP connection or a UDP flow would otherwise keep its DNAT). No match is not an error.
   */
  conntrackDelete(protocol: 'tcp' | 'udp', dstPort: number, dstIp: string | null): Promise<void>;
}

/**
 * The engine's writes through a {@link FirewallBackend}, each counted for {@link FirewallStats}: iptables
 * restores, ipset restores, sysctl writes and conntrack deletions. Reads other than {@link snapshot} go to
 * `backend` directly.
 */
export class FirewallWriter {
  private readonly counters: FirewallStats = { restores: 0, ipsetRestores: 0, sysctlWrites: 0, conntrackDeletes: 0 };

  constructor(readonly backend: FirewallBackend) {}

  /** One family's live rules with counters: what a plan is made against. */
  snapshot(family: Family): Promise<CountedSnapshot> {
    return snapshot(this.backend, family);
  }

  /** Renders `plan` against `live` and restores the payload; no restore when the plan changes nothing. */
  async write(family: Family, live: CountedSnapshot, plan: RestorePlan): Promise<void> {
    const payload = renderFirewallRestore(live, plan);
    if (payload !== null) await this.restore(family, payload);
  }

  /** One `iptables-restore --noflush` (or ip6tables) of a ready payload. */
  async restore(family: Family, payload: string): Promise<void> {
    this.counters.restores++;
    await this.backend.restore(family, payload);
  }

  /** One `ipset restore -exist` of the lines. */
  async ipsetRestore(lines: string[]): Promise<void> {
    this.counters.ipsetRestores++;
    await this.backend.ipsetRestore(lines);
  }

  /** Sets a sysctl key, writing only when its live value differs. */
  async sysctl(key: string, value: string): Promise<void> {
    if ((await this.backend.sysctlGet(key)) !== value) {
      await this.backend.sysctlSet(key, value);
      this.counters.sysctlWrites++;
    }
  }

  /** Forgets the connections to one destination port (and address, when given); see {@link FirewallBackend}. */
  async conntrackDelete(protocol: 'tcp' | 'udp', dstPort: number, dstIp: string | null): Promise<void> {
    this.counters.conntrackDeletes++;
    await this.backend.conntrackDelete(protocol, dstPort, dstIp);
  }

  /** The counters so far (a copy). */
  stats(): FirewallStats {
    return { ...this.counters };
  }
}
