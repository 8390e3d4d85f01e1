// Pure rules of the firewall subsystem, written exactly as `iptables-save` prints them (so live == wanted compares).
import { CONTROLPANEL_RULE, PEER_MARK_MASK, TUNNEL_MARK, type Family, type FilterRule, type PortForwardRule } from '../firewall/firewall.ts';
import {
  FWD_CHAIN,
  IN_CHAIN,
  IN_SYS_CHAIN,
  MARK_CHAIN,
  NATOUT_CHAIN,
  OUT_CHAIN,
  POST_CHAIN,
  PRE_CHAIN,
  markSetName,
  ownerOfLine,
  serverChain,
  type OwnedChain,
  type Table,
} from './firewall-chains.ts';

/** A server's firewall input, normalised (networks masked, addresses bare, forwards checked). */
export interface ServerRuleInput {
  name: string;
  /** Subnets of the server per family, host bits masked (`10.0.1.0/24`). */
  networks: Record<Family, string[]>;
  externalIp: string | null;
  externalInterface: string | null;
  /** This server's own `internal_traffic`. */
  internalTraffic: boolean;
  /** The global `internal_traffic` (false also stops traffic between servers). */
  globalInternalTraffic: boolean;
  /** Port forwards (IPv4), `to_ip` bare. */
  forwards: PortForwardRule[];
  /**
   * IKEv2 clients of the server (`ikev2=1`): charon's TUN device and the server's own IPv4 address (the source of
   * the hairpin SNAT into that device, inside every client's traffic selectors). IPv4 only: IKEv2 pools are IPv4.
   */
  ipsec?: IpsecRuleInput | null;
}

/** The IKEv2 part of a server's rule input. */
export interface IpsecRuleInput {
  /** The TUN device decrypted IKEv2 traffic enters on and traffic to the clients' virtual IPs leaves through. */
  device: string;
  /** The server's address in its IPv4 subnet (bare). */
  address: string;
}

/** The full content of one chain. */
export interface ChainContent {
  table: Table;
  chain: string;
  rules: string[];
}

/** Lines of one server inside a shared top chain. */
export interface DispatchLines {
  top: OwnedChain;
  lines: string[];
}

const MARK_MATCH = `-m mark --mark 0x${TUNNEL_MARK.toString(16)}/0x${TUNNEL_MARK.toString(16)}`;
const hex = (n: number) => `0x${n.toString(16)}`;
const comment = (name: string) => `-m comment --comment "vpnhost:rule:${name}"`;

/** Whether a server has rules of this family (it has a subnet of it). */
function serverHasFamily(s: ServerRuleInput, family: Family): boolean {
  return s.networks[family].length > 0;
}

/**
 * The server's sub-chains for one family:
 * - `VPNHOST-MARK-<if>` (mangle): set the tunnel bit, then the peer mark from the server's ipset (one hash lookup);
 * - `VPNHOST-PRE-<if>` (nat, IPv4): one DNAT per port forward;
 * - `VPNHOST-POST-<if>` (nat): SNAT/MASQUERADE of the subnet, only for packets with the tunnel bit (never the
 *   host's own traffic), and the hairpin masquerade of connections DNATed back into the tunnel — from a peer
 *   (a peer reaching its own forward would otherwise get a packet from its own address) or from the host;
 * - `VPNHOST-FWD-<if>` (filter): replies into the tunnel, forwarded ports, internal-traffic drops, tunnel out.
 */
export function renderServerChains(s: ServerRuleInput, family: Family): ChainContent[] {
  if (!serverHasFamily(s, family)) return [];
  const mark = serverChain(MARK_CHAIN, s.name);
  const post = serverChain(POST_CHAIN, s.name);
  const fwd = serverChain(FWD_CHAIN, s.name);
  const forwards = family === 4 ? s.forwards : [];
  const out = s.externalInterface ? `-o ${s.externalInterface}` : `! -o ${s.name}`;
  const snat = family === 4 && s.externalIp ? `-j SNAT --to-source ${s.externalIp}` : '-j MASQUERADE';
  const ipsec = family === 4 ? (s.ipsec ?? null) : null;
  const nets = ipsec ? s.networks[4] : [];
  const chains: ChainContent[] = [
    {
      table: 'mangle',
      chain: mark,
      rules: [
        `-A ${mark} -j MARK --set-xmark ${hex(TUNNEL_MARK)}/${hex(TUNNEL_MARK)}`,
        `-A ${mark} -j SET --map-set ${markSetName(s.name, family)} src --map-mark`,
      ],
    },
  ];
  if (family === 4) {
    const pre = serverChain(PRE_CHAIN, s.name);
    chains.push({ table: 'nat', chain: pre, rules: forwards.map((f) => renderDnat(pre, s.externalIp, f)) });
  }
  chains.push({
    table: 'nat',
    chain: post,
    rules: [
      // IKEv2: traffic of the subnet into the TUN (peer to client of the same server) keeps its addresses, as on wgN.
      ...(ipsec ? nets.map((net) => `-A ${post} -s ${net} -o ${ipsec.device} -m conntrack ! --ctstate DNAT -j RETURN`) : []),
      ...s.networks[family].map((net) => `-A ${post} -s ${net} ${out} ${MARK_MATCH} ${snat}`),
      ...(forwards.length > 0
        ? [
            ...s.networks[4].map((net) => `-A ${post} -s ${net} -o ${s.name} ${MARK_MATCH} -m conntrack --ctstate DNAT -j MASQUERADE`),
            `-A ${post} -o ${s.name} -m addrtype --src-type LOCAL -m conntrack --ctstate DNAT -j MASQUERADE`,
            ...(ipsec ? renderIpsecHairpin(post, ipsec, nets) : []),
          ]
        : []),
    ],
  });
  const drops = !s.globalInternalTraffic
    ? [`-A ${fwd} -o ${s.name} ${MARK_MATCH} -m conntrack ! --ctstate DNAT -j DROP`]
    : !s.internalTraffic
      ? [`-A ${fwd} -i ${s.name} -o ${s.name} -m conntrack ! --ctstate DNAT -j DROP`]
      : [];
  chains.push({
    table: 'filter',
    chain: fwd,
    rules: [
      `-A ${fwd} -o ${s.name} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
      ...nets.map((net) => `-A ${fwd} -d ${net} -o ${ipsec!.device} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`),
      ...[s.name, ...(ipsec ? [ipsec.device] : [])].flatMap((dev) => forwards.map(
        (f) => `-A ${fwd} -d ${f.to_ip}/32 -o ${dev} -p ${f.protocol} -m ${f.protocol} --dport ${f.to_port} -m conntrack --ctstate DNAT -j ACCEPT`,
      )),
      ...drops,
      ...(ipsec ? renderIpsecDrops(fwd, ipsec, nets, s) : []),
      `-A ${fwd} -i ${s.name} -j ACCEPT`,
      ...nets.map((net) => `-A ${fwd} -s ${net} -i ${ipsec!.device} -j ACCEPT`),
    ],
  });
  return chains;
}

/**
 * Hairpin of a port forward whose target is an IKEv2 client: connections DNATed into the TUN from a tunnel of the
 * server or from the host get the server's own address as source (the TUN has no address of its own to masquerade
 * to, and the server's address is inside every client's traffic selectors, so the reply comes back through it).
 */
function renderIpsecHairpin(post: string, ipsec: IpsecRuleInput, nets: string[]): string[] {
  const snat = `-j SNAT --to-source ${ipsec.address}`;
  return [
    ...nets.map((net) => `-A ${post} -s ${net} -o ${ipsec.device} ${MARK_MATCH} -m conntrack --ctstate DNAT ${snat}`),
    `-A ${post} -o ${ipsec.device} -m addrtype --src-type LOCAL -m conntrack --ctstate DNAT ${snat}`,
  ];
}

/**
 * The internal-traffic drops for IKEv2 clients of the subnet: with the global switch off, nothing from a tunnel
 * reaches them (as for `-o wgN`); with the server's own switch off, nothing of the subnet reaches the subnet
 * (WireGuard peer to IKEv2 client, client to peer, client to client), port forwards excepted as on wgN.
 */
function renderIpsecDrops(fwd: string, ipsec: IpsecRuleInput, nets: string[], s: ServerRuleInput): string[] {
  if (!s.globalInternalTraffic) return nets.map((net) => `-A ${fwd} -d ${net} -o ${ipsec.device} ${MARK_MATCH} -m conntrack ! --ctstate DNAT -j DROP`);
  if (!s.internalTraffic) return nets.map((net) => `-A ${fwd} -s ${net} -d ${net} -m conntrack ! --ctstate DNAT -j DROP`);
  return [];
}

function renderDnat(chain: string, externalIp: string | null, f: PortForwardRule): string {
  const match = `-p ${f.protocol} -m ${f.protocol} --dport ${f.dst_port}`;
  const where = externalIp ? `-d ${externalIp}/32 ${match}` : `${match} -m addrtype --dst-type LOCAL`;
  return `-A ${chain} ${where} -j DNAT --to-destination ${f.to_ip}:${f.to_port}`;
}

/**
 * The server's lines in the shared top chains for one family: the mark dispatch by input interface, the DNAT
 * jumps (from OUTPUT only with an external IP: without one the DNAT matches every local address, and the host's
 * own connections to 127.0.0.1 must never be forwarded), the NAT jump and the two forward dispatch lines.
 */
export function renderServerDispatch(s: ServerRuleInput, family: Family): DispatchLines[] {
  if (!serverHasFamily(s, family)) return [];
  const ipsec = family === 4 ? (s.ipsec ?? null) : null;
  const nets = ipsec ? s.networks[4] : [];
  const mark = serverChain(MARK_CHAIN, s.name);
  const lines: DispatchLines[] = [
    // IKEv2 clients are dispatched by their source (the server's subnet) on the TUN: same sub-chain, set and marks.
    { top: MARK_CHAIN, lines: [`-A ${MARK_CHAIN.chain} -i ${s.name} -j ${mark}`, ...nets.map((net) => `-A ${MARK_CHAIN.chain} -s ${net} -i ${ipsec!.device} -j ${mark}`)] },
  ];
  if (family === 4) {
    const pre = serverChain(PRE_CHAIN, s.name);
    lines.push({ top: PRE_CHAIN, lines: [`-A ${PRE_CHAIN.chain} -j ${pre}`] });
    lines.push({ top: NATOUT_CHAIN, lines: s.externalIp ? [`-A ${NATOUT_CHAIN.chain} -j ${pre}`] : [] });
  }
  lines.push({ top: POST_CHAIN, lines: [`-A ${POST_CHAIN.chain} -j ${serverChain(POST_CHAIN, s.name)}`] });
  const fwd = serverChain(FWD_CHAIN, s.name);
  lines.push({
    top: FWD_CHAIN,
    lines: [
      `-A ${FWD_CHAIN.chain} -o ${s.name} -j ${fwd}`,
      ...nets.map((net) => `-A ${FWD_CHAIN.chain} -d ${net} -o ${ipsec!.device} -j ${fwd}`),
      `-A ${FWD_CHAIN.chain} -i ${s.name} -j ${fwd}`,
      ...nets.map((net) => `-A ${FWD_CHAIN.chain} -s ${net} -i ${ipsec!.device} -j ${fwd}`),
    ],
  });
  return lines;
}

/**
 * A shared top chain with one server's lines replaced: other servers' dispatch lines are kept verbatim, lines of
 * no server are dropped (the chain is the panel's: such a line is stale, e.g. a rule of the old per-interface
 * renderer such as `-A VPNHOST-POST -s 127.0.0.0/8 ! -o wg0 ... -j SNAT`, the issue-6 lock-out), then everything is
 * ordered by (output dispatch before input dispatch, server name). "Output first" lets a server's chain see
 * traffic from other tunnels before their own `-i` accept does.
 */
export function mergeTopChain(live: string[], server: string, wanted: string[]): string[] {
  const others = live.filter((line) => {
    const owner = ownerOfLine(line);
    return owner !== null && owner !== server;
  });
  const rank = (line: string) => (/ -i \S+ -j VPNHOST-FWD-/.test(line) ? 1 : 0);
  return [...others, ...wanted]
    .map((line, index) => ({ line, index }))
    .sort((a, b) => rank(a.line) - rank(b.line) || byOwner(a.line, b.line) || a.index - b.index)
    .map((entry) => entry.line);
}

function byOwner(a: string, b: string): number {
  const x = ownerOfLine(a) ?? '';
  const y = ownerOfLine(b) ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

/** What the global filter lines depend on. */
export interface GlobalRuleInput {
  /** The panel's API TCP port; null when it does not listen on TCP (tests). */
  apiPort: number | null;
  /** Every WireGuard listen port of the managed servers. */
  listenPorts: number[];
  policyInput: 'ACCEPT' | 'DROP';
  policyOutput: 'ACCEPT' | 'DROP';
  /** Operator rules in list order (already checked). */
  rules: FilterRule[];
}

/**
 * `system_CONTROLPANEL` in `VPNHOST-IN-SYS`: the API's TCP port and every WireGuard UDP listen port, and — when
 * `policy_input=DROP` — loopback, replies to the host's own connections and DNS (port 53) from the tunnels, so that
 * no policy locks the operator out or cuts peers off the panel's resolver.
 */
export function renderSystemInput(g: GlobalRuleInput): string[] {
  const c = comment(CONTROLPANEL_RULE);
  const lines: string[] = [];
  if (g.policyInput === 'DROP') {
    lines.push(`-A ${IN_SYS_CHAIN} -i lo ${c} -j ACCEPT`, `-A ${IN_SYS_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED ${c} -j ACCEPT`);
    // Peers' queries to the panel's resolver (unbound on the servers' addresses): only from the tunnels (tunnel bit).
    for (const proto of ['udp', 'tcp']) lines.push(`-A ${IN_SYS_CHAIN} -p ${proto} -m ${proto} --dport 53 ${MARK_MATCH} ${c} -j ACCEPT`);
  }
  if (g.apiPort !== null) lines.push(`-A ${IN_SYS_CHAIN} -p tcp -m tcp --dport ${g.apiPort} ${c} -j ACCEPT`);
  for (const p of uniqueSorted(g.listenPorts)) lines.push(`-A ${IN_SYS_CHAIN} -p udp -m udp --dport ${p} ${c} -j ACCEPT`);
  return lines;
}

/** `VPNHOST-IN`: the jump to `system_CONTROLPANEL` first, then the operator's rules of this family in order. */
export function renderInput(g: GlobalRuleInput, family: Family): string[] {
  const rules = g.rules.map((rule) => renderFilterRule(rule, family)).filter((line): line is string => line !== null);
  return [`-A ${IN_CHAIN.chain} ${comment(CONTROLPANEL_RULE)} -j ${IN_SYS_CHAIN}`, ...rules];
}

/** `VPNHOST-OUT`: with `policy_output=DROP`, loopback, replies and WireGuard's own packets may still leave. */
export function renderOutput(g: GlobalRuleInput): string[] {
  if (g.policyOutput !== 'DROP') return [];
  const c = comment(CONTROLPANEL_RULE);
  return [
    `-A ${OUT_CHAIN.chain} -o lo ${c} -j ACCEPT`,
    `-A ${OUT_CHAIN.chain} -m conntrack --ctstate RELATED,ESTABLISHED ${c} -j ACCEPT`,
    ...uniqueSorted(g.listenPorts).map((p) => `-A ${OUT_CHAIN.chain} -p udp -m udp --sport ${p} ${c} -j ACCEPT`),
  ];
}

/**
 * One operator rule as a `VPNHOST-IN` line of this family, or null when it belongs to the other family (an IPv4
 * CIDR is iptables only, IPv6 ip6tables only, none both). The rule's name rides in its comment. Ports `''`/`0`
 * mean any; ports apply to TCP and UDP only. CIDRs are expected normalised (host bits masked).
 */
export function renderFilterRule(rule: FilterRule, family: Family): string | null {
  const ruleFamily = cidrFamily(rule.s_ip) ?? cidrFamily(rule.d_ip);
  if (ruleFamily !== null && ruleFamily !== family) return null;
  const parts = [`-A ${IN_CHAIN.chain}`];
  if (rule.s_ip && !isAny(rule.s_ip)) parts.push(`-s ${rule.s_ip}`);
  if (rule.d_ip && !isAny(rule.d_ip)) parts.push(`-d ${rule.d_ip}`);
  if (rule.protocol === 'TCP' || rule.protocol === 'UDP') {
    const proto = rule.protocol.toLowerCase();
    parts.push(`-p ${proto} -m ${proto}`);
    if (isPort(rule.s_port)) parts.push(`--sport ${Number(rule.s_port)}`);
    if (isPort(rule.d_port)) parts.push(`--dport ${Number(rule.d_port)}`);
  } else if (rule.protocol === 'ICMP') {
    parts.push(family === 4 ? '-p icmp' : '-p ipv6-icmp');
  }
  parts.push(comment(rule.name), `-j ${rule.action}`);
  return parts.join(' ');
}

/** The rule name a `VPNHOST-IN` line carries in its comment, or null. */
export function ruleNameOf(line: string): string | null {
  const match = /--comment "vpnhost:rule:([A-Za-z0-9_]+)"/.exec(line);
  return match ? match[1] : null;
}

function isPort(text: string): boolean {
  return /^\d+$/.test(text) && Number(text) > 0;
}

function isAny(cidr: string): boolean {
  return cidr === '0.0.0.0/0' || cidr === '::/0';
}

function cidrFamily(cidr: string): Family | null {
  if (!cidr || isAny(cidr)) return null;
  return cidr.includes(':') ? 6 : 4;
}

function uniqueSorted(ports: number[]): number[] {
  return [...new Set(ports.filter((p) => p > 0))].sort((a, b) => a - b);
}

/** The skb mark a peer's packets carry: tunnel bit plus the peer mark (what `-m mark --mark` matches). */
export function packetMark(peerMark: number): number {
  return (TUNNEL_MARK | (peerMark & PEER_MARK_MASK)) >>> 0;
}
