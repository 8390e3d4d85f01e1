// Pure rules of one interface (NAT + forward filter), written exactly as `iptables-save` prints them.
import { networkOf } from '../cidr.ts';

/** nat-table chain holding the source-NAT rules of every managed interface; jumped to from POSTROUTING. */
export const NAT_CHAIN = 'VPNHOST-POST';
/** filter-table chain holding the forward rules of every managed interface; jumped to from FORWARD. */
export const FILTER_CHAIN = 'VPNHOST-FWD';

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
export interface InterfaceRules {
  nat: string[];
  filter: string[];
}

/** The comment that tags every rule of an interface (how its rules are found and removed). */
export function ruleComment(iface: string): string {
  return `-m comment --comment "vpnhost:${iface}"`;
}

/**
 * Renders the rules: NAT of the interface's subnet (SNAT to `externalIp`, else MASQUERADE) leaving through
 * `externalInterface` (else any interface but the tunnel itself); FORWARD accept of traffic from the tunnel and
 * of replies to it; and, when `internalTraffic` is false, a drop of tunnel-to-tunnel traffic placed first.
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
  return { nat: [`-A ${NAT_CHAIN} -s ${subnet} ${out} ${tag} ${target}`], filter };
}
