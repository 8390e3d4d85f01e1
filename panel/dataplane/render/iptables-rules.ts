// Pure rules of one interface (tunnel mark, NAT, forward filter), written exactly as `iptables-save` prints them.
import { networkOf } from '../cidr.ts';

/** mangle-table chain marking packets that enter from a managed interface; jumped to from PREROUTING. */
export const MARK_CHAIN = 'VPNHOST-MARK';
/** nat-table chain holding the source-NAT rules of every managed interface; jumped to from POSTROUTING. */
export const NAT_CHAIN = 'VPNHOST-POST';
/** filter-table chain holding the forward rules of every managed interface; jumped to from FORWARD. */
export const FILTER_CHAIN = 'VPNHOST-FWD';

/**
 * The firewall mark bit (value/mask, as iptables-save prints it) set on packets entering from a WireGuard interface:
 * bit 24, set and matched under its own mask, so per-peer marks in the low 24 bits are left alone.
 */
export const TUNNEL_MARK = '0x1000000/0x1000000';

/** Prefix of every chain the panel owns, in any table. */
export const OWNED_CHAIN_PREFIX = 'VPNHOST-';
/** Prefix of the comment that tags every rule the panel writes (`vpnhost:<interface>`). */
export const RULE_COMMENT_PREFIX = 'vpnhost:';

/**
 * What the panel owns in iptables (IPv4), and nothing else: one dedicated chain per table, each entered by a single
 * `-j` rule at the top of its built-in hook, holding rules tagged `-m comment --comment "vpnhost:<interface>"`:
 *
 * | table  | chain          | hook        | per interface                                                    |
 * |--------|----------------|-------------|------------------------------------------------------------------|
 * | mangle | `VPNHOST-MARK` | PREROUTING  | `-i wgN -j MARK --set-xmark` {@link TUNNEL_MARK}                 |
 * | nat    | `VPNHOST-POST` | POSTROUTING | SNAT/MASQUERADE of the subnet, only for packets with the mark    |
 * | filter | `VPNHOST-FWD`  | FORWARD     | drop peer-to-peer (optional), accept from the tunnel and replies |
 *
 * Every chain name starts with {@link OWNED_CHAIN_PREFIX}; `vpnhost panel firewall-reset` removes exactly these
 * (chains with that prefix, jumps to them, rules with the comment prefix) and no other rule.
 */
export const PANEL_CHAINS = [
  { table: 'nat', chain: NAT_CHAIN, hook: 'POSTROUTING' },
  { table: 'filter', chain: FILTER_CHAIN, hook: 'FORWARD' },
  { table: 'mangle', chain: MARK_CHAIN, hook: 'PREROUTING' },
] as const;

/** A table the panel has a chain in. */
export type PanelTable = (typeof PANEL_CHAINS)[number]['table'];

/** What the firewall rules of an interface depend on. */
export interface FirewallSpec {
  name: string;
  /** Server address as CIDR; its network is the source matched for NAT. */
  address: string;
  externalIp: string | null;
  externalInterface: string | null;
  internalTraffic: boolean;
}

/** Rules of one interface per table, as full `-A CHAIN ...` lines in `iptables-save` form. */
export type InterfaceRules = Record<PanelTable, string[]>;

/** The comment that tags every rule of an interface (how its rules are found and removed). */
export function ruleComment(iface: string): string {
  return `-m comment --comment "${RULE_COMMENT_PREFIX}${iface}"`;
}

/**
 * Renders the rules. mangle: mark what enters from the tunnel. nat: NAT of the interface's subnet (SNAT to
 * `externalIp`, else MASQUERADE) leaving through `externalInterface` (else any interface but the tunnel itself),
 * and only for marked packets — so traffic the host makes itself (which never passes PREROUTING) is never NATed,
 * whatever the subnet. filter: FORWARD accept of traffic from the tunnel and of replies to it, and, when
 * `internalTraffic` is false, a drop of tunnel-to-tunnel traffic placed first.
 */
export function renderInterfaceRules(spec: FirewallSpec): InterfaceRules {
  const subnet = networkOf(spec.address);
  if (!subnet) throw new Error(`invalid address: ${spec.address}`);
  const tag = ruleComment(spec.name);
  const out = spec.externalInterface ? `-o ${spec.externalInterface}` : `! -o ${spec.name}`;
  const target = spec.externalIp ? `-j SNAT --to-source ${spec.externalIp}` : '-j MASQUERADE';
  const filter = [
    ...(spec.internalTraffic ? [] : [`-A ${FILTER_CHAIN} -i ${spec.name} -o ${spec.name} ${tag} -j DROP`]),
    `-A ${FILTER_CHAIN} -i ${spec.name} ${tag} -j ACCEPT`,
    `-A ${FILTER_CHAIN} -o ${spec.name} -m conntrack --ctstate RELATED,ESTABLISHED ${tag} -j ACCEPT`,
  ];
  return {
    mangle: [`-A ${MARK_CHAIN} -i ${spec.name} ${tag} -j MARK --set-xmark ${TUNNEL_MARK}`],
    nat: [`-A ${NAT_CHAIN} -s ${subnet} ${out} -m mark --mark ${TUNNEL_MARK} ${tag} ${target}`],
    filter,
  };
}
