// The firewall/NAT subsystem seam: desired state of servers, peers, port forwards and global policy, and its contract.
import { z } from 'zod';
import type { MangleListEntry, NatListEntry } from '../render/firewall-listing.ts';
import type { TrafficLogChainSpec } from '../render/traffic-log-chain.ts';

/** `ACCEPT` or `DROP`, the two policies and rule actions the spec allows. */
export type Verdict = 'ACCEPT' | 'DROP';

/** Address family of a rule set: 4 is `iptables`, 6 is `ip6tables`. */
export type Family = 4 | 6;

/** Every address family, IPv4 first. */
export const FAMILIES: Family[] = [4, 6];

/** One peer of a server, as the firewall needs it. Peers are identified by their mark (the account's `mangle`). */
export interface FirewallPeer {
  /**
   * The peer's firewall mark (the account's `mangle`), unique on the host, 1..{@link PEER_MARK_MASK}. Packets
   * entering from the peer carry it in the low 24 bits of the skb mark (set in mangle PREROUTING).
   */
  mark: number;
  /** The peer's IPv4 address (bare or `/32`). */
  address: string;
  /** The peer's IPv6 address (bare or `/128`), or null. */
  addressIpv6: string | null;
}

/** One port forward: `external_ip:dst_port/protocol` → `to_ip:to_port` (spec wire names). */
export interface PortForwardRule {
  /** Port on the server's external address, 1-65535. */
  dst_port: number;
  protocol: 'tcp' | 'udp';
  /** The peer address the connection goes to; must be the address of a current peer of the server. */
  to_ip: string;
  /** Port on the peer, 1-65535. */
  to_port: number;
}

/** Everything the firewall needs of one WireGuard server (one `wgN` interface). */
export interface ServerFirewallSpec {
  /** Interface name, `wg<digits>`. */
  name: string;
  /** Server addresses in their subnets as CIDRs (`10.0.1.1/24`, optionally one IPv6 such as `fd00:1::1/64`). */
  subnets: string[];
  /** WireGuard UDP listen port (kept reachable by `system_CONTROLPANEL`); 0 = none yet. */
  listenPort: number;
  /** IPv4 source for SNAT of peer traffic and the address port forwards listen on; null = MASQUERADE. */
  externalIp: string | null;
  /** Interface the peers' traffic leaves through (e.g. `eth0`); null = any interface but the tunnel. */
  externalInterface: string | null;
  /** Whether peers of this server may reach each other (AND-ed with the global `internal_traffic`). */
  internalTraffic: boolean;
  /** Every peer of the server that should carry a mark (enabled peers). */
  peers: FirewallPeer[];
  /** Port forwards to peers of this server. */
  forwards: PortForwardRule[];
  /**
   * The IKEv2 device (charon's kernel-libipsec TUN, `ipsec0`) when the server has `ikev2=1`: its IKEv2 clients use
   * the server's IPv4 subnet (each account's own address), so the same sub-chains, sets and marks apply to traffic
   * of that subnet on this device. null/absent = WireGuard only.
   */
  ipsecDevice?: string | null;
}

/** Options of {@link Firewall.ensureServer}. */
export interface EnsureServerOptions {
  /** Keep the peers the firewall holds for a known server; touch rules only. */
  rulesOnly?: boolean;
}

/** A batch of peer changes on one server (one `ipset restore` per family). */
export interface FirewallPeerChanges {
  /** Peers to add or update, matched by mark (an address change moves the entry). */
  upsert: FirewallPeer[];
  /** Marks of peers to remove; their port forwards go with them. */
  remove: number[];
}

/** Global firewall settings (spec FirewallConf, wire names). */
export interface FirewallConf {
  /** Whether peers may reach peers of other servers (and, AND-ed per server, of their own server). */
  internal_traffic: boolean;
  /** `net.ipv4.ip_forward` (and `net.ipv6.conf.all.forwarding`). */
  ip_forward: boolean;
  policy_forward: Verdict;
  policy_input: Verdict;
  policy_output: Verdict;
}

/** An operator filter rule of the INPUT list (spec FilterRule, wire names). */
export interface FilterRule {
  /** Letters and digits only. */
  name: string;
  action: Verdict;
  chain: 'INPUT';
  protocol: 'TCP' | 'UDP' | 'ICMP' | 'ANY';
  /** Source CIDR; `''` = any. An IPv6 CIDR puts the rule in ip6tables only, IPv4 in iptables only. */
  s_ip: string;
  /** Destination CIDR; `''` = any. */
  d_ip: string;
  /** Source port `0`-`65535` (TCP/UDP only); `''` or `0` = any. */
  s_port: string;
  /** Destination port `0`-`65535` (TCP/UDP only); `''` or `0` = any. */
  d_port: string;
}

/** Where a new filter rule goes in the operator's list (after the built-in `system_CONTROLPANEL`). */
export type RulePosition = 'top' | 'end';

/** Versions and forwarding state (spec FirewallInfo). */
export interface FirewallInfoView {
  /** `sysctl -n net.ipv4.ip_forward`, e.g. `1`. */
  ip_forward: string;
  /** `ip -V`, e.g. `ip utility, iproute2-6.1.0, libbpf 1.1.0`. */
  iproute2: string;
  /** `iptables --version`, e.g. `iptables v1.8.9 (nf_tables)`. */
  iptables: string;
}

/** Counters of the writes a firewall made (tests prove "reconcile of a right state writes nothing"). */
export interface FirewallStats {
  /** `iptables-restore` / `ip6tables-restore` runs. */
  restores: number;
  /** `ipset restore` runs. */
  ipsetRestores: number;
  /** `sysctl -w` runs. */
  sysctlWrites: number;
  /** `conntrack -D` runs (connections of removed port forwards). */
  conntrackDeletes: number;
}

/**
 * The firewall/NAT subsystem of a gateway. Everything lives in the panel's own chains (see
 * `panel/dataplane/render/firewall-chains.ts`) and `vpnhost-*` ipsets; rules of other software are never touched.
 * Writes are `iptables-restore --noflush` (atomic per table), `ipset restore` and `sysctl -w`.
 *
 * Per-peer marks use an `ipset` `hash:ip` set with `skbinfo` per server and family, read by ONE rule
 * (`-j SET --map-set vpnhost-<if>-4 src --map-mark`): a hash lookup per packet and one set entry per peer, so
 * 50,000 peers cost the same per packet as one, and a peer change is one `ipset restore` line (no rule rewrite).
 * Hashed sub-chains by address would need ~512 chains and a rule rewrite per peer; the set is simpler and O(1).
 * The set's `counters` give each peer its own packet/byte counters for {@link Firewall.mangleRules}.
 *
 * NAT (issue 6): source NAT matches only packets that carry the tunnel bit ({@link TUNNEL_MARK}), which the
 * mangle PREROUTING chain sets on traffic entering from a panel WireGuard interface. The host's own traffic never
 * passes PREROUTING before POSTROUTING, so whatever a server's subnet is (even `127.0.0.0/8`), it is never
 * source-NATed. The only NAT of host traffic is the port-forward hairpin: a host connection to
 * `external_ip:dst_port` is DNATed to the peer and masqueraded to the tunnel address so the peer's reply returns.
 *
 * Implementations: `IptablesFirewall` (linux, through the CommandRunner) and `SimulatedFirewall` (an in-memory
 * kernel with the same restore semantics); both share `FirewallEngine`, so invariants, errors and views are equal.
 * Every method is idempotent; calls are serialised.
 */
export interface Firewall {
  /**
   * Full reconcile of one server: reads the live chains and set entries, fixes only what differs. With
   * `rulesOnly` (a server setting changed, e.g. its external IP) and a server this firewall already holds, the
   * peers it holds are kept, `spec.peers` is ignored and the sets are neither read nor written (O(rules), not
   * O(peers)); for an unknown server it is a full reconcile.
   */
  ensureServer(spec: ServerFirewallSpec, opts?: EnsureServerOptions): Promise<void>;
  /**
   * Incremental peer changes: one `ipset restore` per family, no rule rewrite. Removing a peer also removes its
   * port forwards (one `iptables-restore` of the server's NAT/forward sub-chains, only when it had any).
   * Throws `Wireguard server not found` when the server was never ensured.
   */
  applyPeers(server: string, changes: FirewallPeerChanges): Promise<void>;
  /** Replaces the server's port forwards (refills only its own NAT and forward sub-chains). */
  setForwards(server: string, forwards: PortForwardRule[]): Promise<void>;
  /** Removes the server's chains, jumps and sets; no-op when absent. */
  removeServer(server: string): Promise<void>;
  /** Names of the servers whose chains exist live (for reconcile: remove the ones the store no longer has). */
  listServers(): Promise<string[]>;
  /**
   * Global state: filter policies, `ip_forward`, global `internal_traffic`, the operator's INPUT rules in order
   * (built-in `system_CONTROLPANEL` first, always) — reads live state, fixes only what differs.
   */
  ensureGlobal(conf: FirewallConf, rules: FilterRule[]): Promise<void>;
  /** Adds one operator rule at the top (right after `system_CONTROLPANEL`) or the end of the INPUT list. */
  addFilterRule(rule: FilterRule, position: RulePosition): Promise<void>;
  /** Deletes one operator rule by name. */
  deleteFilterRule(name: string): Promise<void>;
  /** Removes everything the panel owns: chains, hook jumps, `vpnhost-*` sets; resets the filter policies to ACCEPT. */
  resetAll(): Promise<void>;
  /**
   * Traffic logging's mangle chains `VPNHOST-LOG` / `VPNHOST-LOG-STATE` (NFLOG per selected state, see
   * `render/traffic-log-chain.ts`), hooked from FORWARD and INPUT, both families; null removes them. Idempotent.
   */
  setTrafficLog(spec: TrafficLogChainSpec | null): Promise<void>;
  /** NAT rules of one server (DNAT, SNAT/MASQUERADE, hairpin) with counters, `iptables-save -c` lines. */
  natRules(server: string): Promise<string>;
  /** Forward filter rules of one server with counters, `iptables-save -c` lines. */
  filterRules(server: string): Promise<string>;
  /** Mark rules of one peer's server with counters, then the peer's set entries with their own counters. */
  mangleRules(server: string, mark: number): Promise<string>;
  /** Every server's NAT rules, live (both families), for `GET /firewall/rules/nat`. */
  natList(): Promise<NatListEntry[]>;
  /**
   * Every peer mark, live from the servers' sets (both families), for `GET /firewall/rules/mangle`; `name` is the
   * mark, the service puts the account name in. O(peers): one `ipset save` per set.
   */
  mangleList(): Promise<MangleListEntry[]>;
  /** Versions of the tools and `ip_forward`. */
  info(): Promise<FirewallInfoView>;
  /** Everything the panel owns, live, counters stripped (for "a failed request changed nothing" diffs). */
  dump(): Promise<string>;
  /** Writes made so far. */
  stats(): FirewallStats;
}

/** The peer mark occupies the low 24 bits of the skb mark. */
export const PEER_MARK_MASK = 0xffffff;
/** Bit set on every packet entering from a panel WireGuard interface; source NAT requires it. */
export const TUNNEL_MARK = 0x1000000;
/** The name of the built-in INPUT rule that keeps the API and WireGuard ports reachable. */
export const CONTROLPANEL_RULE = 'system_CONTROLPANEL';

/** A refused request; `text` is the spec's seed text (or one of `FIREWALL_TEXTS`) the API answers. */
export class FirewallError extends Error {
  constructor(readonly text: string) {
    super(text);
    this.name = 'FirewallError';
  }
}

const port = z.number().int();
/** Input schema of {@link PortForwardRule} (ranges checked by the engine with the spec's texts). */
export const portForwardSchema = z.object({ dst_port: port, protocol: z.string(), to_ip: z.string(), to_port: port });
/** Input schema of {@link FirewallPeer}. */
export const firewallPeerSchema = z.object({ mark: z.number().int(), address: z.string(), addressIpv6: z.string().nullable() });
/** Input schema of {@link ServerFirewallSpec}. */
export const serverFirewallSpecSchema = z.object({
  name: z.string(),
  subnets: z.array(z.string()).min(1),
  listenPort: z.number().int().min(0).max(65535),
  externalIp: z.string().nullable(),
  externalInterface: z.string().nullable(),
  internalTraffic: z.boolean(),
  peers: z.array(firewallPeerSchema),
  forwards: z.array(portForwardSchema),
  ipsecDevice: z.string().nullable().optional(),
});
/** Input schema of {@link FilterRule} (field checks with the spec's texts are the engine's). */
export const filterRuleSchema = z.object({
  name: z.string(),
  action: z.string(),
  chain: z.string(),
  protocol: z.string(),
  s_ip: z.string(),
  d_ip: z.string(),
  s_port: z.string(),
  d_port: z.string(),
});
/** Input schema of {@link FirewallConf}. */
export const firewallConfSchema = z.object({
  internal_traffic: z.boolean(),
  ip_forward: z.boolean(),
  policy_forward: z.string(),
  policy_input: z.string(),
  policy_output: z.string(),
});
