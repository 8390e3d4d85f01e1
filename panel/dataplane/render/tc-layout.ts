// Shaping layout: the derived (never allocated) tc handles of an interface, its /24 groups and each peer, and their checks.
import { createHash } from 'node:crypto';
import { parseCidr } from '../cidr.ts';
import { SHAPING_TEXTS, ShapingError, type ShapedPeer, type ShapingCapabilities, type ShapingTarget } from '../shaping/shaping.ts';

/** Which HTB tree: `download` = the interface's egress (key dst), `upload` = the IFB device (key src). */
export type Direction = 'download' | 'upload';
export const DIRECTIONS: readonly Direction[] = ['download', 'upload'];

/** u32 preference (and root hash table order) of the IPv4 and IPv6 classification, in every filter block. */
export const PREF_V4 = 1;
export const PREF_V6 = 2;
/** The root HTB's major handle (`1:`). */
export const ROOT_MAJOR = 1;
/** Root block: the IPv4 table hashed on the third octet, one node per /24 group sending it to the group's class. */
export const ROOT_HT_V4 = 0x1;
/** Root block: IPv6 level-1 tables (byte 14) and level-2 tables (byte 15, one per level-1 bucket); a node per peer. */
export const HT_V6_L1 = 0x2;
export const HT_V6_L2 = 0x200;
/** Group block: the IPv4 table hashed on the fourth octet and the IPv6 table hashed on the last byte; a node per peer. */
export const GROUP_HT_V4 = 0x1;
export const GROUP_HT_V6 = 0x2;
/** u32 node ids are 12 bits. */
const MAX_NODE = 0xfff;
/** The highest usable HTB class minor (0 names the qdisc, 0xffff is kept free). */
const MAX_MINOR = 0xfffe;

/**
 * The bucket of the kernel's per-device qdisc hash (16 buckets, `hash_32(handle, 4)`) a qdisc major lands in. HTB's
 * invisible default leaf of every class (a `pfifo 0:`) is hashed with handle 0, so every lookup of a major sharing
 * bucket 0 with them walks all of them: on a device with 50,000 classes each `tc class|filter ... parent M:` would cost
 * O(peers). Group majors therefore skip that bucket.
 */
export function qdiscHashBucket(major: number): number {
  return Math.imul((major << 16) >>> 0, 0x61c88647) >>> 28;
}

/** The child HTB major of each of the (at most 256) /24 groups of a window, in order: 0x100 and up, bucket 0 skipped. */
export const GROUP_MAJORS: readonly number[] = (() => {
  const out: number[] = [];
  for (let major = 0x100; out.length < 256; major++) if (qdiscHashBucket(major) !== qdiscHashBucket(0)) out.push(major);
  return out;
})();

/** One /24 of the shapeable window: a class `1:<major>` of the root whose leaf is the child HTB `<major>:`. */
export interface GroupTc {
  /** 0-based: the host offset of its addresses >> 8. */
  index: number;
  /** Its /24 network (the third octet's block), as a number. */
  network: number;
  /** The child HTB's major handle, also the group class's minor under the root. */
  major: number;
}

/** How one interface is shaped: derived from its target and the kernel's capabilities. */
export interface ShapingLayout {
  iface: string;
  /** The IFB device that carries the upload tree. */
  ifb: string;
  /** Leaf qdisc kind under each peer class, or null for HTB's default pfifo. */
  leaf: string | null;
  /** The server subnet (first address, prefix) as the target gives it. */
  subnet: { network: number; prefix: number; text: string };
  /** The shapeable window: the subnet, or its first /16 when wider (hosts 1-65534). */
  window: { network: number; prefix: number };
  /** The /24 groups of the window, by index. */
  groups: GroupTc[];
}

/** A peer filter: a u32 node in a level-2 table of one filter block (the root's, or its group's). */
export interface U32Slot {
  family: 4 | 6;
  /** Address in canonical text, without prefix. */
  addr: string;
  /** The match words of the address (1 for IPv4, 4 for IPv6) as unsigned 32-bit numbers. */
  words: number[];
  /** The qdisc whose filter block holds it: {@link ROOT_MAJOR} or the group's major. */
  block: number;
  ht: number;
  bucket: number;
  node: number;
  /** The class it sends packets to (`major:minor`): the peer's class, or its group's class (root IPv6 nodes). */
  flow: { major: number; minor: number };
}

/** The tc objects of one shaped peer (what both directions install when their rate is not 0). */
export interface PeerTc {
  key: string;
  /** HTB class minor: the IPv4 host offset in the subnet. */
  minor: number;
  /** The peer's /24 group (its class lives in the group's child HTB); null for a peer without limits. */
  group: GroupTc | null;
  download: number;
  upload: number;
  /** Addresses in canonical text (null: none, or a peer without limits). */
  ipv4: string | null;
  ipv6: string | null;
  /** Its filters, the same in both directions: IPv4 in the group block; IPv6 in the root block and the group block. */
  slots: U32Slot[];
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
  if (!caps.u32) throw new ShapingError(SHAPING_TEXTS.noClassifier);
  const prefix = cidr.prefix;
  const network = (Number(cidr.value) & maskOf(prefix)) >>> 0;
  const windowPrefix = Math.max(prefix, 16);
  const count = windowPrefix >= 24 ? 1 : 2 ** (24 - windowPrefix);
  const first = (network & maskOf(24)) >>> 0;
  const groups = Array.from({ length: count }, (_, index): GroupTc => ({ index, network: (first + index * 256) >>> 0, major: GROUP_MAJORS[index] }));
  return {
    iface: target.name,
    ifb: ifbName(target.name),
    leaf: caps.leaf,
    subnet: { network, prefix, text: `${v4Text(network)}/${prefix}` },
    window: { network, prefix: windowPrefix },
    groups,
  };
}

/** Where a peer goes, with every per-peer check; throws {@link ShapingError}. Handles derive from addresses only. */
export function placePeer(layout: ShapingLayout, peer: ShapedPeer): PeerTc {
  const limited = peer.downloadMbit > 0 || peer.uploadMbit > 0;
  // An unlimited peer has no tc object at all, so it neither needs nor occupies a minor.
  if (!limited) return { key: peer.key, minor: 0, group: null, download: 0, upload: 0, ipv4: null, ipv6: null, slots: [] };
  if (peer.ipv4 === null) throw new ShapingError(SHAPING_TEXTS.noIpv4(peer.key));
  const cidr = parseCidr(peer.ipv4);
  if (!cidr || cidr.family !== 4 || cidr.prefix !== 32) throw new ShapingError(SHAPING_TEXTS.badPeer(`ipv4 ${peer.ipv4} of ${peer.key}`));
  const ip = Number(cidr.value);
  const ipv4 = v4Text(ip);
  if (((ip & maskOf(layout.subnet.prefix)) >>> 0) !== layout.subnet.network) {
    throw new ShapingError(SHAPING_TEXTS.outsideSubnet(peer.key, ipv4, layout.subnet.text));
  }
  const minor = (ip - layout.subnet.network) >>> 0;
  if (minor < 1 || minor > MAX_MINOR) throw new ShapingError(SHAPING_TEXTS.minorRange(peer.key, ipv4, minor));
  const group = layout.groups[((ip - layout.groups[0].network) >>> 0) >>> 8];
  const own = { major: group.major, minor };
  const fourth = ip & 0xff;
  const slots: U32Slot[] = [{ family: 4, addr: ipv4, words: [ip >>> 0], block: group.major, ht: GROUP_HT_V4, bucket: fourth, node: 1, flow: own }];
  let ipv6: string | null = null;
  if (peer.ipv6 !== null) {
    const v6 = parseCidr(peer.ipv6);
    if (!v6 || v6.family !== 6 || v6.prefix !== 128) throw new ShapingError(SHAPING_TEXTS.badPeer(`ipv6 ${peer.ipv6} of ${peer.key}`));
    const words = [96n, 64n, 32n, 0n].map((shift) => Number((v6.value >> shift) & 0xffffffffn));
    const low = words[3];
    ipv6 = canonicalV6(peer.ipv6.split('/')[0]);
    // Root: the address (last two bytes hashed) → the group's class; group: the address (last byte) → the peer's class.
    slots.push({
      family: 6, addr: ipv6, words, block: ROOT_MAJOR, ht: HT_V6_L2 + ((low >>> 8) & 0xff), bucket: low & 0xff, node: 1 + (minor % MAX_NODE),
      flow: { major: ROOT_MAJOR, minor: group.major },
    });
    slots.push({ family: 6, addr: ipv6, words, block: group.major, ht: GROUP_HT_V6, bucket: low & 0xff, node: 1 + fourth, flow: own });
  }
  return { key: peer.key, minor, group, download: peer.downloadMbit, upload: peer.uploadMbit, ipv4, ipv6, slots };
}

/** The root-block IPv6 node of a peer (the one whose handle two peers can contend for), if any. */
export function rootV6Slot(peer: PeerTc): U32Slot | undefined {
  return peer.slots.find((s) => s.block === ROOT_MAJOR);
}

/** u32 handle text `ht:bucket:node` in hex, as tc takes and prints it (bucket 0 prints empty). */
export function u32Handle(ht: number, bucket: number, node: number): string {
  return `${hex(ht)}:${bucket === 0 ? '' : hex(bucket)}:${hex(node)}`;
}

/** The handle of a peer's filter (unique within its block). */
export function slotHandle(slot: U32Slot): string {
  return u32Handle(slot.ht, slot.bucket, slot.node);
}

/** A class id as tc prints it (`100:2`). */
export function classId(major: number, minor: number): string {
  return `${hex(major)}:${hex(minor)}`;
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
