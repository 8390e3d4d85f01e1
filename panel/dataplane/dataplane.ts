// The data plane as one bundle of per-subsystem seams (WireGuard, firewall/NAT, shaping, DNS; IPsec to come).
import type { Dns } from './dns/dns.ts';
import type { Driver } from './driver.ts';
import type { Firewall } from './firewall/firewall.ts';
import type { Ipsec } from './ipsec/ipsec.ts';
import type { Shaper } from './shaping/shaping.ts';

/** `linux` (the real tools) or `simulated` (in-memory twins with the same contracts). */
export type DataplaneKind = 'linux' | 'simulated';

/**
 * Everything the panel drives on a gateway, one seam per subsystem. Each seam has a linux implementation, a
 * simulated twin and a contract suite under `test/contract/`; the bundle is built by `createDataplane` and handed
 * to `buildApp(deps)`. Only `DataplaneSync` (panel/services/dataplane-sync.ts) writes through it; the services read
 * live WireGuard state (dumps, handshakes) through `wireguard`.
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
   * answers their subnets. Written through `DnsService` (panel/services/dns.ts) inside the sync's lane.
   */
  readonly dns: Dns;
  /**
   * IPsec/IKEv2 responder (strongSwan's charon, run by the panel, driven over vici; see `ipsec/ipsec.ts`). Written
   * through `Ikev2Sync` (panel/services/ikev2/) inside the sync's lane.
   */
  readonly ipsec: Ipsec;
  /** Releases what the subsystems hold (not the kernel state: links, rules and classes outlive the panel). */
  close(): Promise<void>;
}
