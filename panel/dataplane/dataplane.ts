// The data plane as one bundle of per-subsystem seams (WireGuard, firewall/NAT, shaping, DNS; IPsec to come).
import type { Dns } from './dns/dns.ts';
import type { Driver } from './wireguard/driver.ts';
import type { Firewall } from './firewall/firewall.ts';
import type { Ipsec } from './ipsec/ipsec.ts';
import type { Shaper } from './shaping/shaping.ts';

/** `linux` (the real tools) or `simulated` (in-memory twins with the same contracts). */
export type DataplaneKind = 'linux' | 'simulated';

/**
 * Everything the panel drives on a gateway, one seam per subsystem. Each seam has a linux implementation, a
 * simulated twin and a contract suite under `test/contract/`; the bundle is built by `createDataplane` and handed
 * to `buildApp(deps)`. Only `DataplaneSync` (panel/services/dataplane-sync.ts) holds it for writing: WireGuard,
 * firewall and shaping are written by the sync itself; DNS, IPsec and the traffic-log chains by one service each
 * through the sync's lane-bound writers (`panel/services/lane-writers.ts`). The services read live state (dumps,
 * handshakes, SAs, daemon state) through the seams' read methods.
 *
 * Who owns what on the host:
 * - `wireguard`: the `wgN` links, their keys, addresses, MTU and peers (`wg set`, `ip`); no iptables, no tc.
 * - `firewall`: every iptables/ip6tables chain `VPNHOST-*`, the `vpnhost-*` ipsets (per-peer marks), NAT, port
 *   forwards, filter rules, `ip_forward` (see `firewall/firewall.ts`).
 * - `shaper`: the HTB trees on `wgN` egress and on its IFB device `ifb-wgN` (see `shaping/shaping.ts`).
 */
export interface Dataplane {
  readonly kind: DataplaneKind;
  /** WireGuard links, keys and peers. */
  readonly wireguard: Driver;
  /** Firewall/NAT: marks, NAT, forwards, filter rules, forwarding sysctls. */
  readonly firewall: Firewall;
  /** Per-peer bandwidth shaping. */
  readonly shaper: Shaper;
  /**
   * DNS resolver (unbound, run and supervised by the panel; see `dns/dns.ts`): listens on the servers' addresses,
   * answers their subnets. Written by `DnsService` (panel/services/dns.ts) through `DataplaneSync.writers.dns`.
   */
  readonly dns: Dns;
  /**
   * IPsec/IKEv2 responder (strongSwan's charon, run by the panel, driven over vici; see `ipsec/ipsec.ts`). Written
   * by `Ikev2Sync` (panel/services/ikev2/) through `DataplaneSync.writers.ipsec`.
   */
  readonly ipsec: Ipsec;
  /** Releases what the subsystems hold (not the kernel state: links, rules and classes outlive the panel). */
  close(): Promise<void>;
}
