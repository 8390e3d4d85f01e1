// The (table, chain, hook) triples the firewall subsystem owns, and the names of its per-server sub-chains and sets.
import type { Family } from '../firewall/firewall.ts';

/** The iptables tables the firewall writes. */
export type Table = 'mangle' | 'nat' | 'filter';

/** A top-level chain the panel owns, entered by ONE jump from a built-in hook chain. */
export interface OwnedChain {
  table: Table;
  chain: string;
  /** Built-in chain holding the jump (`-A <hook> -j <chain>`, inserted at position 1). */
  hook: string;
}

/** Every chain name the panel owns starts with this (resetAll removes every such chain). */
export const CHAIN_PREFIX = 'VPNHOST-';
/** Every ipset the panel owns starts with this. */
export const SET_PREFIX = 'vpnhost-';

/** mangle: per-server dispatch by input interface; sub-chains set the tunnel bit and the peer mark. */
export const MARK_CHAIN: OwnedChain = { table: 'mangle', chain: 'VPNHOST-MARK', hook: 'PREROUTING' };
/** nat: port-forward DNAT of packets arriving at the host. */
export const PRE_CHAIN: OwnedChain = { table: 'nat', chain: 'VPNHOST-PRE', hook: 'PREROUTING' };
/** nat: port-forward DNAT of the host's own connections to `external_ip:dst_port` (hairpin). */
export const NATOUT_CHAIN: OwnedChain = { table: 'nat', chain: 'VPNHOST-NATOUT', hook: 'OUTPUT' };
/** nat: source NAT of tunnel traffic and the hairpin masquerade. */
export const POST_CHAIN: OwnedChain = { table: 'nat', chain: 'VPNHOST-POST', hook: 'POSTROUTING' };
/** filter: the built-in `system_CONTROLPANEL` jump, then the operator's rules. */
export const IN_CHAIN: OwnedChain = { table: 'filter', chain: 'VPNHOST-IN', hook: 'INPUT' };
/** filter: per-server forward rules. */
export const FWD_CHAIN: OwnedChain = { table: 'filter', chain: 'VPNHOST-FWD', hook: 'FORWARD' };
/** filter: what keeps the API's replies and WireGuard's packets going out when `policy_output=DROP`. */
export const OUT_CHAIN: OwnedChain = { table: 'filter', chain: 'VPNHOST-OUT', hook: 'OUTPUT' };

/** mangle: traffic logging's NFLOG rules (render/traffic-log-chain.ts), one chain entered from FORWARD and INPUT. */
export const LOG_CHAINS: OwnedChain[] = ['FORWARD', 'INPUT'].map((hook) => ({ table: 'mangle', chain: 'VPNHOST-LOG', hook }));

/** filter: the lines of `system_CONTROLPANEL` (jumped to from the first line of VPNHOST-IN). */
export const IN_SYS_CHAIN = 'VPNHOST-IN-SYS';

/** The owned top-level chains of the per-server part. */
export const SERVER_TOP_CHAINS: OwnedChain[] = [MARK_CHAIN, PRE_CHAIN, NATOUT_CHAIN, POST_CHAIN, FWD_CHAIN];
/** Sub-chain of a server under a top chain: `VPNHOST-MARK-wg0`, `VPNHOST-PRE-wg0`, `VPNHOST-POST-wg0`, `VPNHOST-FWD-wg0`. */
export function serverChain(top: OwnedChain, iface: string): string {
  return `${top.chain}-${iface}`;
}

/** The per-server sub-chains, by table (NATOUT reuses the PRE sub-chain: same DNAT rules). */
export function serverChains(iface: string): Array<{ table: Table; chain: string }> {
  return [
    { table: 'mangle', chain: serverChain(MARK_CHAIN, iface) },
    { table: 'nat', chain: serverChain(PRE_CHAIN, iface) },
    { table: 'nat', chain: serverChain(POST_CHAIN, iface) },
    { table: 'filter', chain: serverChain(FWD_CHAIN, iface) },
  ];
}

/** The server a line of a top chain belongs to (it jumps to one of that server's sub-chains), or null. */
export function ownerOfLine(line: string): string | null {
  const match = / -j VPNHOST-(?:MARK|PRE|POST|FWD)-(wg\d+)$/.exec(line);
  return match ? match[1] : null;
}

/** The server a sub-chain name belongs to, or null when it is not a per-server sub-chain. */
export function ownerOfChain(chain: string): string | null {
  const match = /^VPNHOST-(?:MARK|PRE|POST|FWD)-(wg\d+)$/.exec(chain);
  return match ? match[1] : null;
}

/** The ipset holding the marks of one server's peers of one family: `vpnhost-wg0-4`. */
export function markSetName(iface: string, family: Family): string {
  return `${SET_PREFIX}${iface}-${family}`;
}
