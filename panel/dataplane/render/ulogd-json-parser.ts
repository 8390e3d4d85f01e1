// Pure parser of ulogd2's JSON output lines (stack NFLOG → BASE → IFINDEX → IP2STR → JSON) into FlowEvents.
import { LOG_STATES } from './traffic-log-chain.ts';
import type { FlowEvent, FlowState } from '../traffic-log/flow-event.ts';

/** IANA protocol numbers → the keywords the logs use; others are written as their number. */
const PROTOCOLS: Record<number, string> = { 1: 'icmp', 6: 'tcp', 17: 'udp', 47: 'gre', 50: 'esp', 58: 'ipv6-icmp', 132: 'sctp' };
/** `oob.family` of ulogd: AF_INET and AF_INET6. */
const AF_INET = 2;
const AF_INET6 = 10;
const IPV6_HEADER = 40;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Parses one line of ulogd2's JSON plugin (2.0.8), e.g. `{"oob.prefix": "new", "oob.time.sec": 1795449353,
 * "oob.time.usec": 996335, "oob.mark": 16777221, "oob.family": 2, "ip.protocol": 6, "ip.tos": 16, "ip.totlen": 60,
 * "src_port": 40000, "dest_port": 443, "oob.in": "wg0", "oob.out": "eth0", "src_ip": "10.0.1.2", "dest_ip":
 * "192.0.2.10", ...}`. The state is the NFLOG prefix the panel's rule set (`render/traffic-log-chain.ts`); IPv6
 * packets carry `ip6.payloadlen` and `ip6.priority` (traffic class) instead of `ip.totlen` and `ip.tos`.
 * Returns null for anything else (another prefix, a line that is no JSON object, missing addresses).
 */
export function parseUlogdJson(line: string): FlowEvent | null {
  let o: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    o = parsed as Record<string, unknown>;
  } catch {
    return null;
  }
  const prefix = str(o['oob.prefix']);
  if (!prefix || !(LOG_STATES as readonly string[]).includes(prefix)) return null;
  const familyCode = num(o['oob.family']);
  const family = familyCode === AF_INET ? 4 : familyCode === AF_INET6 ? 6 : null;
  const src = str(o.src_ip);
  const dst = str(o.dest_ip);
  const sec = num(o['oob.time.sec']);
  if (family === null || !src || !dst || sec === null) return null;
  const protoNumber = num(o['ip.protocol']) ?? num(o['ip6.nexthdr']);
  const payload = num(o['ip6.payloadlen']);
  const length = family === 4 ? num(o['ip.totlen']) : payload === null ? null : payload + IPV6_HEADER;
  const out = str(o['oob.out']);
  return {
    time: new Date(sec * 1000 + Math.floor((num(o['oob.time.usec']) ?? 0) / 1000)),
    state: prefix as FlowState,
    family,
    protocol: protoNumber === null ? 'unknown' : (PROTOCOLS[protoNumber] ?? String(protoNumber)),
    src,
    dst,
    sport: num(o.src_port),
    dport: num(o.dest_port),
    interface_in: str(o['oob.in']) ?? '',
    interface_out: out ? out : null,
    length: length ?? num(o['raw.pktlen']) ?? 0,
    tos: num(family === 4 ? o['ip.tos'] : o['ip6.priority']) ?? 0,
    mark: num(o['oob.mark']) ?? 0,
  };
}
