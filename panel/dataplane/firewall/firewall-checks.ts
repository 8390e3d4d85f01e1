// Input checks of the firewall subsystem: zod shape first, then each field with the spec's text (nothing is written before).
import { z } from 'zod';
import { E } from '../../../shared/wire/error-texts.ts';
import { formatCidr, parseCidr } from '../cidr.ts';
import type { ServerRuleInput } from '../render/firewall-rules.ts';
import {
  CONTROLPANEL_RULE,
  FirewallError,
  PEER_MARK_MASK,
  filterRuleSchema,
  firewallConfSchema,
  firewallPeerSchema,
  portForwardSchema,
  serverFirewallSpecSchema,
  type FilterRule,
  type FirewallConf,
  type FirewallPeer,
  type PortForwardRule,
  type Verdict,
} from './firewall.ts';
import { FIREWALL_TEXTS as T } from './firewall-texts.ts';

/** Interface names the panel manages (as the WireGuard driver): `wg` then digits, at most 15 characters. */
const INTERFACE_NAME = /^wg\d{1,13}$/;
const LINK_NAME = /^[A-Za-z0-9_.-]{1,15}$/;
const RULE_NAME = /^[A-Za-z0-9]+$/;
/** A canonical dotted quad (no leading zeros), optionally `/32`: the fast path of 50,000-peer batches. */
const IPV4_HOST = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})(?:\/32)?$/;

/** A peer with its addresses in the form `ipset save` prints them (bare, canonical). */
export interface NormalPeer {
  mark: number;
  address: string;
  addressIpv6: string | null;
}

/** A checked server: the render input plus what the engine keeps. */
export interface NormalServer {
  input: ServerRuleInput;
  listenPort: number;
  /** Peers by mark. */
  peers: Map<number, NormalPeer>;
  /** Every peer address (IPv4 and IPv6) → the mark of its peer (O(1) checks of a change). */
  addresses: Map<string, number>;
}

/** One zod parse for a whole batch (a parse per peer costs ~20 µs: 1 s at 50,000). */
const peerListSchema = z.array(firewallPeerSchema);

/** Parses with a zod schema; a shape error is a bad request of the given text. */
function shape<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, value: unknown, text: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new FirewallError(text);
  return parsed.data;
}

/** A bare canonical address of the family, from `addr` or `addr/32|/128`; throws `text` otherwise. */
function bareAddress(text: string, family: 4 | 6, error: string): string {
  const v4 = family === 4 ? IPV4_HOST.exec(text) : null;
  if (v4 && v4.slice(1, 5).every((octet) => Number(octet) <= 255)) return text.split('/')[0];
  const cidr = parseCidr(text);
  const max = family === 4 ? 32 : 128;
  if (!cidr || cidr.family !== family || cidr.prefix !== max) throw new FirewallError(error);
  return formatCidr(cidr).split('/')[0];
}

/** Checks one peer (mark range, address forms); `value` already has the {@link firewallPeerSchema} shape. */
function checkPeer(peer: FirewallPeer): NormalPeer {
  if (!Number.isInteger(peer.mark) || peer.mark < 1 || peer.mark > PEER_MARK_MASK) throw new FirewallError(T.WRONG_MARK);
  return {
    mark: peer.mark,
    address: bareAddress(peer.address, 4, E.WRONG_IP),
    addressIpv6: peer.addressIpv6 === null || peer.addressIpv6 === '' ? null : bareAddress(peer.addressIpv6, 6, E.WRONG_IP),
  };
}

/** Peers by mark, refusing a repeated mark (`Mark already in use`) or address (`IP address already in use`). */
export function checkPeers(values: unknown[]): Map<number, NormalPeer> {
  const peers = new Map<number, NormalPeer>();
  const addresses = new Set<string>();
  for (const value of shape(peerListSchema, values, E.WRONG_IP)) {
    const peer = checkPeer(value);
    if (peers.has(peer.mark)) throw new FirewallError(T.MARK_IN_USE);
    for (const a of [peer.address, peer.addressIpv6]) {
      if (a === null) continue;
      if (addresses.has(a)) throw new FirewallError(E.IP_IN_USE);
      addresses.add(a);
    }
    peers.set(peer.mark, peer);
  }
  return peers;
}

/** Address → mark of every peer. */
function indexAddresses(peers: Map<number, NormalPeer>): Map<string, number> {
  const index = new Map<string, number>();
  for (const peer of peers.values()) {
    index.set(peer.address, peer.mark);
    if (peer.addressIpv6) index.set(peer.addressIpv6, peer.mark);
  }
  return index;
}

/** Checks a server spec (not its forwards, see {@link checkForwards}) and normalises it. */
export function checkServer(value: unknown, globalInternalTraffic: boolean): NormalServer {
  const spec = shape(serverFirewallSpecSchema, value, E.WRONG_INTERFACE_NAME);
  if (!INTERFACE_NAME.test(spec.name)) throw new FirewallError(E.WRONG_INTERFACE_NAME);
  const networks: Record<4 | 6, string[]> = { 4: [], 6: [] };
  for (const subnet of spec.subnets) {
    const cidr = parseCidr(subnet);
    if (!cidr) throw new FirewallError(T.WRONG_SUBNET);
    const net = formatCidr(cidr, true);
    if (!networks[cidr.family].includes(net)) networks[cidr.family].push(net);
  }
  const externalIp = spec.externalIp === null || spec.externalIp === '' ? null : bareAddress(spec.externalIp, 4, E.WRONG_EXTERNAL_IP);
  const externalInterface = spec.externalInterface === null || spec.externalInterface === '' ? null : spec.externalInterface;
  if (externalInterface !== null && !LINK_NAME.test(externalInterface)) throw new FirewallError(T.WRONG_EXTERNAL_INTERFACE);
  const ipsecDevice = spec.ipsecDevice ?? null;
  if (ipsecDevice !== null && !LINK_NAME.test(ipsecDevice)) throw new FirewallError(T.WRONG_IPSEC_DEVICE);
  const ipv4 = spec.subnets.find((subnet) => parseCidr(subnet)?.family === 4);
  const peers = checkPeers(spec.peers);
  return {
    input: {
      name: spec.name,
      networks,
      externalIp,
      externalInterface,
      internalTraffic: spec.internalTraffic,
      globalInternalTraffic,
      forwards: [],
      ipsec: ipsecDevice !== null && ipv4 ? { device: ipsecDevice, address: ipv4.split('/')[0] } : null,
    },
    listenPort: spec.listenPort,
    peers,
    addresses: indexAddresses(peers),
  };
}

/** What forwards are checked against. */
export interface ForwardContext {
  /** The server's own peer addresses (→ mark). */
  addresses: Map<string, number>;
  /** Listen ports of every server (this one's new one included). */
  listenPorts: number[];
  /** `dst_port_protocol` keys of the forwards of the other servers. */
  otherKeys: Set<string>;
  /** The panel's API port, or null. */
  apiPort: number | null;
}

/**
 * Checks port forwards in the spec's order of texts: protocol, dst_port range, duplicate pair (in the list or on
 * another server), dst_port equal to a WireGuard listen port, to_port range, target not a peer of the server.
 */
export function checkForwards(values: unknown[], ctx: ForwardContext): PortForwardRule[] {
  const keys = new Set<string>();
  return values.map((value) => {
    const f = shape(portForwardSchema, value, E.PF_PROTOCOL);
    if (f.protocol !== 'tcp' && f.protocol !== 'udp') throw new FirewallError(E.PF_PROTOCOL);
    if (f.dst_port < 1 || f.dst_port > 65535) throw new FirewallError(E.PF_DST_PORT_RANGE);
    const key = `${f.dst_port}_${f.protocol}`;
    if (keys.has(key) || ctx.otherKeys.has(key)) throw new FirewallError(E.PF_ALREADY_ENABLED);
    keys.add(key);
    if (ctx.listenPorts.includes(f.dst_port)) throw new FirewallError(E.PF_DST_IS_LISTEN_PORT);
    if (f.protocol === 'tcp' && ctx.apiPort === f.dst_port) throw new FirewallError(T.DST_IS_API_PORT);
    if (f.to_port < 1 || f.to_port > 65535) throw new FirewallError(E.PF_TO_PORT_RANGE);
    const cidr = parseCidr(f.to_ip);
    const to = cidr && cidr.family === 4 && cidr.prefix === 32 ? formatCidr(cidr).split('/')[0] : null;
    if (to === null || !ctx.addresses.has(to)) throw new FirewallError(E.PF_INCORRECT_PEER);
    return { dst_port: f.dst_port, protocol: f.protocol, to_ip: to, to_port: f.to_port };
  });
}

/** Checks the global conf (policy texts of the spec) and returns it typed. */
export function checkConf(value: unknown): FirewallConf {
  const conf = shape(firewallConfSchema, value, E.FW_POLICY_INPUT);
  const verdict = (v: string, text: string): Verdict => {
    if (v !== 'ACCEPT' && v !== 'DROP') throw new FirewallError(text);
    return v;
  };
  return {
    internal_traffic: conf.internal_traffic,
    ip_forward: conf.ip_forward,
    policy_input: verdict(conf.policy_input, E.FW_POLICY_INPUT),
    policy_forward: verdict(conf.policy_forward, E.FW_POLICY_FORWARD),
    policy_output: verdict(conf.policy_output, E.FW_POLICY_OUTPUT),
  };
}

/**
 * Checks one operator rule with the spec's texts (name, chain, CIDRs) and ours (action, protocol, ports, mixed
 * families); CIDRs come back with host bits masked (as iptables prints them), `0.0.0.0/0`/`::/0` as `''`.
 */
export function checkFilterRule(value: unknown): FilterRule {
  const rule = shape(filterRuleSchema, value, E.FW_RULE_NAME);
  if (!RULE_NAME.test(rule.name)) throw new FirewallError(rule.name === CONTROLPANEL_RULE ? E.FW_RULE_EXISTS : E.FW_RULE_NAME);
  if (rule.chain !== 'INPUT') throw new FirewallError(E.FW_CHAIN);
  const d_ip = ruleCidr(rule.d_ip, E.FW_DST_CIDR);
  const s_ip = ruleCidr(rule.s_ip, E.FW_SRC_CIDR);
  if (rule.action !== 'ACCEPT' && rule.action !== 'DROP') throw new FirewallError(T.WRONG_ACTION);
  if (!['TCP', 'UDP', 'ICMP', 'ANY'].includes(rule.protocol)) throw new FirewallError(T.WRONG_PROTOCOL);
  for (const p of [rule.s_port, rule.d_port]) {
    if (p !== '' && (!/^\d{1,5}$/.test(p) || Number(p) > 65535)) throw new FirewallError(T.WRONG_RULE_PORT);
  }
  if (s_ip && d_ip && s_ip.includes(':') !== d_ip.includes(':')) throw new FirewallError(T.MIXED_FAMILIES);
  return {
    name: rule.name,
    action: rule.action,
    chain: 'INPUT',
    protocol: rule.protocol as FilterRule['protocol'],
    s_ip,
    d_ip,
    s_port: rule.s_port === '' ? '' : String(Number(rule.s_port)),
    d_port: rule.d_port === '' ? '' : String(Number(rule.d_port)),
  };
}

function ruleCidr(text: string, error: string): string {
  if (text === '') return '';
  if (!text.includes('/')) throw new FirewallError(error);
  const cidr = parseCidr(text);
  if (!cidr) throw new FirewallError(error);
  if (cidr.prefix === 0) return '';
  return formatCidr(cidr, true);
}
