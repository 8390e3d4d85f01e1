// IPv4 address arithmetic for servers and peers: CIDR parsing, subnet ranges, free-address enumeration.
import { isIPv4 } from 'node:net';

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
 * The first `10.0.<n>.1/24` (n = 1..255, then n = 0) whose subnet overlaps none of `taken`; null when all do.
 * `taken` holds the subnet bounds of the existing servers (servers are few).
 */
export function pickServerSubnet(taken: Array<{ first: number; last: number }>): V4Cidr | null {
  for (const n of [...Array.from({ length: 255 }, (_, i) => i + 1), 0]) {
    const cidr = parseV4Cidr(`10.0.${n}.1/24`)!;
    if (!taken.some((t) => t.first <= cidr.last && t.last >= cidr.first)) return cidr;
  }
  return null;
}
