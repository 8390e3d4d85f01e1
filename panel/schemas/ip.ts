// Pure IP address helpers (IPv4 and IPv6): parse to bytes, canonical text, CIDR parsing and containment.

/** Parses dotted IPv4 (no leading zeros) into 4 bytes, or null. */
function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

/** Parses IPv6 text (with `::` and an optional dotted IPv4 tail) into 16 bytes, or null. */
function parseIpv6(text: string): Uint8Array | null {
  if (text.length < 2 || text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const items = part.split(':');
    const groups: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIpv4(item);
        if (!v4) return null;
        groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        groups.push(parseInt(item, 16));
      }
    }
    return groups;
  };
  const head = toGroups(halves[0]);
  const tail = halves.length === 2 ? toGroups(halves[1]) : [];
  if (!head || !tail) return null;
  if (halves.length === 1 && head.length !== 8) return null;
  if (halves.length === 2 && head.length + tail.length > 7) return null;
  const groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

function isV4Mapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * Parses an IP address into bytes: 4 for IPv4, 16 for IPv6. With `mapV4` (default) an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`) yields the 4 IPv4 bytes, so it compares equal to `1.2.3.4`. Zone ids are rejected.
 */
export function parseIp(text: string, mapV4 = true): Uint8Array | null {
  if (typeof text !== 'string') return null;
  if (text.includes(':')) {
    const bytes = parseIpv6(text);
    if (bytes && mapV4 && isV4Mapped(bytes)) return bytes.slice(12);
    return bytes;
  }
  return parseIpv4(text);
}

/** The longest run of at least two zero groups of an IPv6 address (RFC 5952 `::`); start -1 when none. */
export function longestZeroRun(groups: number[]): { bestStart: number; bestLen: number } {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  return { bestStart, bestLen };
}

/** Text of address bytes: dotted IPv4, or RFC 5952 compressed lower-case IPv6. */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  const { bestStart, bestLen } = longestZeroRun(groups);
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Canonical text of an address (`::ffff:1.2.3.4` → `1.2.3.4`, `2001:DB8:0::1` → `2001:db8::1`), or null. */
export function canonicalIp(text: string): string | null {
  const bytes = parseIp(text);
  return bytes ? formatIp(bytes) : null;
}

/** Whether two address texts name the same address (IPv4-mapped forms equal their IPv4 address). */
export function sameIp(a: string, b: string): boolean {
  const x = parseIp(a);
  const y = parseIp(b);
  return !!x && !!y && x.length === y.length && x.every((v, i) => v === y[i]);
}

/** IP version of an address text: 4, 6 or 0 when not an address (IPv4-mapped IPv6 counts as 6). */
export function ipVersion(text: string): 0 | 4 | 6 {
  const bytes = parseIp(text, false);
  return bytes ? (bytes.length === 4 ? 4 : 6) : 0;
}

/** A parsed CIDR: address bytes as written, prefix length, version. */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
  version: 4 | 6;
}

/** Parses `addr/prefix` (prefix required, 0-32 or 0-128, decimal without leading zeros), or null. */
export function parseCidr(text: string): Cidr | null {
  if (typeof text !== 'string') return null;
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const bytes = parseIp(text.slice(0, slash), false);
  const prefixText = text.slice(slash + 1);
  if (!bytes || !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > bytes.length * 8) return null;
  return { bytes, prefix, version: bytes.length === 4 ? 4 : 6 };
}

/** Canonical `addr/prefix` text of a CIDR. */
export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr.bytes)}/${cidr.prefix}`;
}

/** Whether `ip` (address text) lies in `cidr` (same version only). */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const bytes = parseIp(ip, cidr.version === 4);
  if (!bytes || bytes.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; i < bytes.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== (cidr.bytes[i] & mask)) return false;
  }
  return true;
}

/** Whether two CIDRs of the same version share any address (one contains the other's network). */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  if (a.version !== b.version) return false;
  const bits = Math.min(a.prefix, b.prefix);
  return samePrefix(a.bytes, b.bytes, bits);
}

/** Whether `address` is the all-zero host of `subnet` (IPv4 network address, IPv6 subnet-router anycast). */
export function isSubnetZeroHost(address: string, subnet: Cidr): boolean {
  const bytes = parseIp(address, false);
  if (!bytes || bytes.length !== subnet.bytes.length || subnet.prefix >= bytes.length * 8 - 1) return false;
  if (!cidrContains(subnet, address)) return false;
  for (let bit = subnet.prefix; bit < bytes.length * 8; bit++) {
    if ((bytes[bit >> 3] >> (7 - (bit & 7))) & 1) return false;
  }
  return true;
}

/** Kind of address range a server or peer address may never use (the host itself or no unicast network). */
export type ReservedKind = 'loopback' | 'unspecified' | 'link-local' | 'multicast' | 'broadcast' | 'ipv4-mapped';

/**
 * Ranges refused for server addresses (`address`, `address_ipv6`) and peer addresses: a tunnel subnet there would
 * shadow the host's own traffic (loopback), is no unicast network (unspecified, multicast, broadcast), is
 * per-link only (link-local), or stands for IPv4 traffic inside IPv6 (IPv4-mapped).
 */
export const RESERVED_RANGES: ReadonlyArray<{ cidr: string; kind: ReservedKind }> = [
  { cidr: '0.0.0.0/8', kind: 'unspecified' },
  { cidr: '127.0.0.0/8', kind: 'loopback' },
  { cidr: '169.254.0.0/16', kind: 'link-local' },
  { cidr: '224.0.0.0/4', kind: 'multicast' },
  { cidr: '255.255.255.255/32', kind: 'broadcast' },
  { cidr: '::/128', kind: 'unspecified' },
  { cidr: '::1/128', kind: 'loopback' },
  { cidr: '::ffff:0:0/96', kind: 'ipv4-mapped' },
  { cidr: 'fe80::/10', kind: 'link-local' },
  { cidr: 'ff00::/8', kind: 'multicast' },
];

const PARSED_RESERVED = RESERVED_RANGES.map((r) => ({ ...r, parsed: parseCidr(r.cidr)! }));

/** The reserved range `cidr` overlaps (its subnet, whatever its host bits), or null when none. */
export function reservedRangeOf(cidr: Cidr): ReservedKind | null {
  return PARSED_RESERVED.find((r) => cidrsOverlap(r.parsed, cidr))?.kind ?? null;
}

function samePrefix(a: Uint8Array, b: Uint8Array, bits: number): boolean {
  for (let i = 0; i < a.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((a[i] & mask) !== (b[i] & mask)) return false;
  }
  return true;
}
