// CIDR parsing and normalisation the way wg and ip print addresses (host bits masked for allowed IPs).
import { isIPv4, isIPv6 } from 'node:net';
import { longestZeroRun } from '../schemas/ip.ts';

/** A parsed address with prefix length. */
export interface Cidr {
  family: 4 | 6;
  /** Address as a number (IPv4 fits in 32 bits, IPv6 in 128). */
  value: bigint;
  prefix: number;
}

/** Parses `addr` or `addr/prefix` (IPv4 or IPv6); a bare address gets a host prefix. Null when invalid. */
export function parseCidr(text: string): Cidr | null {
  const [addr, prefixText, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return null;
  const family = isIPv4(addr) ? 4 : isIPv6(addr) ? 6 : 0;
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > max) return null;
  }
  return { family, value: family === 4 ? v4ToBigInt(addr) : v6ToBigInt(addr), prefix };
}

/** Formats a parsed CIDR; `mask` clears host bits (what wg does with allowed IPs). */
export function formatCidr(cidr: Cidr, mask = false): string {
  const bits = cidr.family === 4 ? 32 : 128;
  let value = cidr.value;
  if (mask) {
    const hostBits = BigInt(bits - cidr.prefix);
    value = (value >> hostBits) << hostBits;
  }
  return `${cidr.family === 4 ? bigIntToV4(value) : bigIntToV6(value)}/${cidr.prefix}`;
}

/** An allowed IP as `wg show` prints it (canonical, host bits masked), or null when wg would reject it. */
export function normalizeAllowedIp(text: string): string | null {
  const cidr = parseCidr(text);
  return cidr ? formatCidr(cidr, true) : null;
}

/** An interface address as `ip addr` prints it (canonical, host bits kept), or null when invalid. */
export function normalizeAddress(text: string): string | null {
  const cidr = parseCidr(text);
  return cidr ? formatCidr(cidr, false) : null;
}

/** The network of a CIDR, e.g. `10.0.1.1/24` → `10.0.1.0/24`; null when invalid. */
export function networkOf(text: string): string | null {
  return normalizeAllowedIp(text);
}

function v4ToBigInt(addr: string): bigint {
  return addr.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function bigIntToV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
}

function v6ToBigInt(addr: string): bigint {
  let text = addr;
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const v4 = v4ToBigInt(v4Tail[1]);
    text = `${text.slice(0, -v4Tail[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - headParts.length - tailParts.length : 0;
  const groups = [...headParts, ...Array<string>(fill).fill('0'), ...tailParts];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** RFC 5952 text (what inet_ntop prints): lowercase, longest run of ≥2 zero groups compressed. */
function bigIntToV6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt((7 - i) * 16)) & 0xffffn));
  const { bestStart, bestLen } = longestZeroRun(groups);
  const hex = groups.map((g) => g.toString(16));
  // Embedded IPv4 as inet_ntop writes it: ::a.b.c.d (compatible) and ::ffff:a.b.c.d (mapped).
  if (bestStart === 0 && (bestLen === 6 || (bestLen === 5 && groups[5] === 0xffff))) {
    return `::${bestLen === 5 ? 'ffff:' : ''}${bigIntToV4(value & 0xffffffffn)}`;
  }
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
