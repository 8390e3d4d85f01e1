// Address arithmetic for servers and peers: IPv4 CIDRs, subnet ranges, free addresses, generated peer IPv6.
import { isIPv4 } from 'node:net';
import { formatCidr, parseCidr } from '../schemas/ip.ts';

/** A parsed IPv4 CIDR with its subnet bounds, all as unsigned 32-bit numbers. */
export interface V4Cidr {
  ip: number;
  prefix: number;
  /** First address of the subnet (network address). */
  first: number;
  /** Last address of the subnet (broadcast address for prefixes up to /30). */
  last: number;
}

/** Dotted quad → unsigned 32-bit number; null when not a plain IPv4 address. */
export function parseIpv4(text: string): number | null {
  if (!isIPv4(text)) return null;
  const p = text.split('.');
  return ((Number(p[0]) << 24) >>> 0) + (Number(p[1]) << 16) + (Number(p[2]) << 8) + Number(p[3]);
}

/** Unsigned 32-bit number → dotted quad. */
export function formatIpv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/** Parses `a.b.c.d/n` or a bare `a.b.c.d` (meaning /32); null when malformed. */
export function parseV4Cidr(text: string): V4Cidr | null {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIpv4(addr);
  if (ip === null) return null;
  let prefix = 32;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,2}$/.test(p) || Number(p) > 32) return null;
    prefix = Number(p);
  }
  const size = 2 ** (32 - prefix);
  const first = ip - (ip % size);
  return { ip, prefix, first, last: first + size - 1 };
}

/** `ip/prefix` text of a parsed CIDR (host bits kept). */
export function formatV4Cidr(cidr: { ip: number; prefix: number }): string {
  return `${formatIpv4(cidr.ip)}/${cidr.prefix}`;
}

/** The usable host addresses of a subnet: without network and broadcast for prefixes up to /30. */
export function hostBounds(subnet: { first: number; last: number; prefix: number }): { lo: number; hi: number } {
  return subnet.prefix >= 31 ? { lo: subnet.first, hi: subnet.last } : { lo: subnet.first + 1, hi: subnet.last - 1 };
}

/** Whether `ip` is a usable host address of `subnet`. */
export function isHostOf(ip: number, subnet: { first: number; last: number; prefix: number }): boolean {
  const { lo, hi } = hostBounds(subnet);
  return ip >= lo && ip <= hi;
}

/** Whether a server address is usable: IPv4 CIDR with room for peers (/30 or wider) and a host address itself. */
export function isServerAddress(cidr: V4Cidr | null): cidr is V4Cidr {
  return cidr !== null && cidr.prefix >= 1 && cidr.prefix <= 30 && isHostOf(cidr.ip, cidr);
}

/**
 * Unused host addresses of a server subnet, ascending: the subnet minus the server's own address minus `used`
 * (which must be ascending, as the (server_id, ip) index yields them). Stops after `limit` addresses.
 */
export function freeAddresses(
  server: { ip: number; first: number; last: number; prefix: number },
  used: Iterable<number>,
  limit: number,
): string[] {
  const { lo, hi } = hostBounds(server);
  const out: string[] = [];
  const it = used[Symbol.iterator]();
  let next = it.next();
  for (let ip = lo; ip <= hi && out.length < limit; ip++) {
    while (!next.done && next.value < ip) next = it.next();
    if (!next.done && next.value === ip) continue;
    if (ip === server.ip) continue;
    out.push(formatIpv4(ip));
  }
  it.return?.();
  return out;
}

/**
 * The first `10.0.<n>.1/24` (n = 1..255, then n = 0) whose subnet overlaps none of `taken` and that `refused`
 * (e.g. "overlaps a host network") does not reject; null when all do. `taken` holds the subnet bounds of the
 * existing servers (servers are few).
 */
export function pickServerSubnet(
  taken: Array<{ first: number; last: number }>,
  refused: (cidr: V4Cidr) => boolean = () => false,
): V4Cidr | null {
  for (const n of [...Array.from({ length: 255 }, (_, i) => i + 1), 0]) {
    const cidr = parseV4Cidr(`10.0.${n}.1/24`)!;
    if (!taken.some((t) => t.first <= cidr.last && t.last >= cidr.first) && !refused(cidr)) return cidr;
  }
  return null;
}

/** How many 2^32-apart slots {@link peerIpv6} tries before giving up. */
const IPV6_SLOTS = 8;

/**
 * The IPv6 address (`/128`, canonical) a new peer gets on a server with IPv6: the server's IPv6 network plus the
 * peer's IPv4 host offset (`10.0.1.7` in `10.0.1.1/24` → `fd00:0:0:1::7` in `fd00:0:0:1::1/64`), unique without a
 * scan because IPv4 peer addresses are. When that address is the server's own or `taken` (picked by hand), the
 * same offset 2^32 further on is tried, a few times. Null when the subnet has no free slot for the offset.
 */
export function peerIpv6(serverAddressIpv6: string, hostOffset: number, taken: (cidr: string) => boolean): string | null {
  const server = parseCidr(serverAddressIpv6);
  if (!server || server.version !== 6) return null;
  const own = toBigInt(server.bytes);
  const hostBits = BigInt(128 - server.prefix);
  const network = (own >> hostBits) << hostBits;
  for (let slot = 0n; slot < BigInt(IPV6_SLOTS); slot++) {
    const offset = BigInt(hostOffset) + (slot << 32n);
    if (offset >= 1n << hostBits) break;
    if (network + offset === own) continue;
    const text = formatCidr({ bytes: toBytes(network + offset), prefix: 128, version: 6 });
    if (!taken(text)) return text;
  }
  return null;
}

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

function toBytes(value: bigint): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 15, v = value; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}
