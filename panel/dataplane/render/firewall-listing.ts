// Pure structured listings of the panel's live NAT rules and peer marks (GET /firewall/rules/nat and /mangle).
import { PEER_MARK_MASK, type Family } from '../firewall/firewall.ts';
import { POST_CHAIN, PRE_CHAIN, ownerOfChain } from './firewall-chains.ts';
import type { SavedSet } from './firewall-ipset.ts';
import type { CountedSnapshot } from './parse-iptables-save-counters.ts';

/** One NAT rule of a server (spec NatRule fields, plus the DNAT target and the live counters). */
export interface NatListEntry {
  /** The server's interface name. */
  name: string;
  /** `SNAT`, `MASQUERADE` or `DNAT`. */
  action: string;
  /** `POSTROUTING` (source NAT, hairpin) or `PREROUTING` (port forward). */
  chain: string;
  /** Matched source (`10.0.1.0/24`), `''` for any. */
  s_ip: string;
  /** Matched destination (`192.0.2.1/32`), `''` for any. */
  d_ip: string;
  /** SNAT source address, `''` otherwise. */
  'to-source': string;
  /** DNAT target `ip:port` with the matched `dst_port/protocol`, `''` otherwise. */
  'to-destination': string;
  family: Family;
  packets: number;
  bytes: number;
}

/** One peer mark (spec MangleRule fields, plus server, mark and the entry's counters). */
export interface MangleListEntry {
  /** The peer's mark as text (the service names it after the account). */
  name: string;
  action: 'MARK';
  chain: 'PREROUTING';
  /** The peer's address. */
  s_ip: string;
  d_ip: '';
  /** The mark as iptables prints it, e.g. `0x5/0xffffff`. */
  'set-mark': string;
  server: string;
  mark: number;
  packets: number;
  bytes: number;
}

const field = (rule: string, re: RegExp) => re.exec(rule)?.[1] ?? '';

/** NAT rules of every server sub-chain in a `*-save -c` snapshot: chains by name, rules in chain order. */
export function listNat(snapshot: CountedSnapshot, family: Family): NatListEntry[] {
  const out: NatListEntry[] = [];
  const chains = [...(snapshot.get('nat') ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [chain, saved] of chains) {
    const server = ownerOfChain(chain);
    if (!server) continue;
    const hook = chain.startsWith(`${PRE_CHAIN.chain}-`) ? 'PREROUTING' : chain.startsWith(`${POST_CHAIN.chain}-`) ? 'POSTROUTING' : null;
    if (!hook) continue;
    for (const { rule, packets, bytes } of saved.rules) {
      const action = field(rule, / -j (\S+)/);
      if (action === 'RETURN') continue; // the IKEv2 subnet's exemption from source NAT, not a NAT rule
      const port = field(rule, /--dport (\d+)/);
      const proto = field(rule, / -p (\S+)/);
      const target = field(rule, /--to-destination (\S+)/);
      out.push({
        name: server,
        action,
        chain: hook,
        s_ip: field(rule, / -s (\S+)/),
        d_ip: field(rule, / -d (\S+)/),
        'to-source': field(rule, /--to-source (\S+)/),
        'to-destination': target && port ? `${target} (${port}/${proto})` : target,
        family,
        packets,
        bytes,
      });
    }
  }
  return out;
}

/** Peer marks of one server's set (address → mark with counters), sorted by mark. */
export function listMarks(server: string, set: SavedSet | null): MangleListEntry[] {
  if (!set) return [];
  return [...set.entries]
    .map(([address, e]) => ({
      name: String(e.mark),
      action: 'MARK' as const,
      chain: 'PREROUTING' as const,
      s_ip: address,
      d_ip: '' as const,
      'set-mark': `0x${e.mark.toString(16)}/0x${PEER_MARK_MASK.toString(16)}`,
      server,
      mark: e.mark,
      packets: e.packets,
      bytes: e.bytes,
    }))
    .sort((a, b) => a.mark - b.mark || (a.s_ip < b.s_ip ? -1 : 1));
}
