// Shaping layout: the derived (never allocated) tc handles of an interface and of each peer, and their checks.
import { createHash } from 'node:crypto';
import { parseCidr } from '../cidr.ts';
import { SHAPING_TEXTS, ShapingError, type ShapedPeer, type ShapingCapabilities, type ShapingTarget } from '../shaping/shaping.ts';

/** Which HTB tree: `download` = the interface's egress (key dst), `upload` = the IFB device (key src). */
export type Direction = 'download' | 'upload';
export const DIRECTIONS: readonly Direction[] = ['download', 'upload'];

/** u32 preference (and root hash table order) of the IPv4 and IPv6 classification. */
export const PREF_V4 = 1;
export const PREF_V6 = 2;
/** Level-1 hash tables (bucket = third octet for IPv4, byte 14 of the address for IPv6). */
export const HT_V4_L1 = 0x1;
export const HT_V6_L1 = 0x2;
/** Level-2 hash tables: one per level-1 bucket value (bucket = fourth octet / byte 15). */
export const HT_V4_L2 = 0x100;
export const HT_V6_L2 = 0x200;
/** u32 node ids are 12 bits. */
export const MAX_NODE = 0xfff;
/** The highest usable HTB class minor (0 names the qdisc, 0xffff is kept free). */
export const MAX_MINOR = 0xfffe;

/** How one interface is shaped: derived from its target and the kernel's capabilities. */
export interface ShapingLayout {
  iface: string;
  /** The IFB device that carries the upload tree. */
  ifb: string;
  /** `flow` (IPv4 classified by cls_flow's map mode, no per-peer filter) or `u32` (two-level hash tables). */
  classifier: 'flow' | 'u32';
  /** Leaf qdisc kind under each class, or null for HTB's default pfifo. */
  leaf: string | null;
  /** The server subnet (first address, prefix) as the target gives it. */
  subnet: { network: number; prefix: number; text: string };
  /** The shapeable window: the subnet, or its first /16 when wider (hosts 1-65534). */
  window: { network: number; prefix: number };
  /** Third-octet values of the window: one level-2 IPv4 table each. */
  thirds: number[];
}

/** The tc objects of one shaped peer (what both directions install when their rate is not 0). */
export interface PeerTc {
  key: string;
  /** HTB class minor: the IPv4 host offset in the subnet. */
  minor: number;
  download: number;
  upload: number;
  /** IPv4 address (dotted), or null for a peer without limits and without IPv4. */
  v4: U32Slot | null;
  v6: U32Slot | null;
}

/** A peer filter in a level-2 u32 table. */
export interface U32Slot {
  family: 4 | 6;
  /** Address in canonical text, without prefix. */
  addr: string;
  /** The match words of the address (1 for IPv4, 4 for IPv6) as unsigned 32-bit numbers. */
  words: number[];
  ht: number;
  bucket: number;
  node: number;
}

/** The IFB device name of an interface: `ifb-<iface>` when it fits IFNAMSIZ, else `ifb` + 12 hex of a hash. */
export function ifbName(iface: string): string {
  const plain = `ifb-${iface}`;
  return plain.length <= 15 ? plain : `ifb${createHash('sha256').update(iface).digest('hex').slice(0, 12)}`;
}

/** The layout of `target` on a kernel with `caps`; throws {@link ShapingError} when shaping is impossible. */
export function layoutOf(target: ShapingTarget, caps: ShapingCapabilities): ShapingLayout {
  const cidr = parseCidr(target.address);
  if (!cidr || cidr.family !== 4 || !target.address.includes('/')) throw new ShapingError(SHAPING_TEXTS.badTarget(`address ${target.address} is not an IPv4 CIDR`));
  if (!caps.ifb) throw new ShapingError(SHAPING_TEXTS.noIfb);
  if (!caps.u32 && !caps.flow) throw new ShapingError(SHAPING_TEXTS.noClassifier);
  const prefix = cidr.prefix;
  const network = Number(cidr.value) & maskOf(prefix);
  const windowPrefix = Math.max(prefix, 16);
  const thirds: number[] = [];
  const first = (network >>> 8) & 0xff;
  const count = windowPrefix >= 24 ? 1 : 2 ** (24 - windowPrefix);
  for (let i = 0; i < count; i++) thirds.push(first + i);
  // cls_flow maps `dst & hostmask` to the minor, which is right only inside one /16: wider subnets use u32.
  const classifier = caps.flow && prefix >= 16 ? 'flow' : caps.u32 ? 'u32' : 'flow';
  if (classifier === 'flow' && prefix < 16) throw new ShapingError(SHAPING_TEXTS.noClassifier);
  return {
    iface: target.name,
    ifb: ifbName(target.name),
    classifier,
    leaf: caps.leaf,
    subnet: { network, prefix, text: `${v4Text(network)}/${prefix}` },
    window: { network, prefix: windowPrefix },
    thirds,
  };
}

/** Where a peer goes, with every per-peer check; throws {@link ShapingError}. Handles derive from addresses only. */
export function placePeer(layout: ShapingLayout, peer: ShapedPeer): PeerTc {
  const limited = peer.downloadMbit > 0 || peer.uploadMbit > 0;
  // An unlimited peer has no tc object at all, so it neither needs nor occupies a minor.
  if (!limited) return { key: peer.key, minor: 0, download: 0, upload: 0, v4: null, v6: null };
  let v4: U32Slot | null = null;
  let minor = 0;
  if (peer.ipv4 !== null) {
    const cidr = parseCidr(peer.ipv4);
    if (!cidr || cidr.family !== 4 || cidr.prefix !== 32) throw new ShapingError(SHAPING_TEXTS.badPeer(`ipv4 ${peer.ipv4} of ${peer.key}`));
    const ip = Number(cidr.value);
    const text = v4Text(ip);
    if (((ip & maskOf(layout.subnet.prefix)) >>> 0) !== layout.subnet.network) {
      throw new ShapingError(SHAPING_TEXTS.outsideSubnet(peer.key, text, layout.subnet.text));
    }
    minor = (ip - layout.subnet.network) >>> 0;
    if (limited && (minor < 1 || minor > MAX_MINOR)) throw new ShapingError(SHAPING_TEXTS.minorRange(peer.key, text, minor));
    v4 = { family: 4, addr: text, words: [ip >>> 0], ht: HT_V4_L2 + ((ip >>> 8) & 0xff), bucket: ip & 0xff, node: 1 };
  } else if (limited) {
    throw new ShapingError(SHAPING_TEXTS.noIpv4(peer.key));
  }
  let v6: U32Slot | null = null;
  if (peer.ipv6 !== null) {
    const cidr = parseCidr(peer.ipv6);
    if (!cidr || cidr.family !== 6 || cidr.prefix !== 128) throw new ShapingError(SHAPING_TEXTS.badPeer(`ipv6 ${peer.ipv6} of ${peer.key}`));
    const words = [96n, 64n, 32n, 0n].map((shift) => Number((cidr.value >> shift) & 0xffffffffn));
    const low = words[3];
    const text = peer.ipv6.split('/')[0];
    v6 = { family: 6, addr: canonicalV6(text), words, ht: HT_V6_L2 + ((low >>> 8) & 0xff), bucket: low & 0xff, node: 1 + (minor % MAX_NODE) };
  }
  return { key: peer.key, minor, download: peer.downloadMbit, upload: peer.uploadMbit, v4, v6 };
}

/** u32 handle text `ht:bucket:node` in hex, as tc takes and prints it (bucket 0 prints empty). */
export function u32Handle(ht: number, bucket: number, node: number): string {
  return `${hex(ht)}:${bucket === 0 ? '' : hex(bucket)}:${hex(node)}`;
}

/** The handle of a peer's filter. */
export function slotHandle(slot: U32Slot): string {
  return u32Handle(slot.ht, slot.bucket, slot.node);
}

/** Lowercase hex without prefix. */
export function hex(n: number): string {
  return n.toString(16);
}

/** Dotted text of an IPv4 number. */
export function v4Text(ip: number): string {
  return [24, 16, 8, 0].map((s) => String((ip >>> s) & 0xff)).join('.');
}

/** The netmask of a prefix as an unsigned number. */
export function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** An IPv6 address in RFC 5952 text (lowercase, longest zero run compressed). */
export function canonicalV6(text: string): string {
  const cidr = parseCidr(text);
  if (!cidr) return text;
  const groups = Array.from({ length: 8 }, (_, i) => Number((cidr.value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups (two or more), as inet_ntop does.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) { best = i; bestLen = j - i; }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}
