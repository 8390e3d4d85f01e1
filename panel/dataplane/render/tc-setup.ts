// The scaffold of a shaped interface as `tc -batch` lines: HTB root, one child HTB per /24 group, the u32 tables, the IFB redirect.
import {
  GROUP_HT_V4, GROUP_HT_V6, HT_V6_L1, HT_V6_L2, PREF_V4, PREF_V6, ROOT_HT_V4, ROOT_MAJOR, classId, hex, maskOf, u32Handle, v4Text,
  type Direction, type GroupTc, type ShapingLayout,
} from './tc-layout.ts';
import { deviceOf } from './tc-peer.ts';

/** Root hash table tc gives the first u32 instance of a filter block (the second one gets 801:). */
export const ROOT_HT = 0x800;
/** Rate and ceil of a group class in bit/s: far above any interface, so only the peer classes under it limit. */
export const GROUP_RATE_BIT = 100e9;
/** Burst of a group class: 100 µs at its rate. */
const GROUP_BURST = 1_250_000;

/** Offsets (from the network header) of the address a direction keys on. */
function offsets(dir: Direction): { key: 'dst' | 'src'; v4: number; v6Last: number } {
  // IPv4: saddr at 12, daddr at 16. IPv6: saddr at 8, daddr at 24; the last 32-bit word is 12 bytes further.
  return dir === 'download' ? { key: 'dst', v4: 16, v6Last: 36 } : { key: 'src', v4: 12, v6Last: 20 };
}

/**
 * The qdiscs and group classes of one direction's tree on a device whose root was just (re)created: HTB `1:` with
 * `default 0` (unclassified packets bypass shaping), then per /24 group a class `1:<M>` and its child HTB `<M>:`
 * (`default 0`: an unshaped peer of a shaped /24 passes unlimited). Peer classes go in after these, filters last.
 */
export function trunkLines(layout: ShapingLayout, dir: Direction): string[] {
  const dev = deviceOf(layout, dir);
  const lines = [`qdisc add dev ${dev} root handle ${hex(ROOT_MAJOR)}: htb default 0`];
  for (const g of layout.groups) lines.push(...groupLines(dev, g));
  return lines;
}

function groupLines(dev: string, g: GroupTc): string[] {
  const rate = `${GROUP_RATE_BIT / 1e9}gbit`;
  return [
    `class add dev ${dev} parent ${hex(ROOT_MAJOR)}: classid ${classId(ROOT_MAJOR, g.major)} htb rate ${rate} ceil ${rate} burst ${GROUP_BURST}b cburst ${GROUP_BURST}b quantum 1514`,
    `qdisc add dev ${dev} parent ${classId(ROOT_MAJOR, g.major)} handle ${hex(g.major)}: htb default 0`,
  ];
}

/**
 * The scaffold filters of one direction: in the root block, IPv4 root → table 1 hashed on the third octet, whose
 * node per group sends the /24 to the group class, and IPv6 root → table 2 (byte 14) → tables 2xx (byte 15) where
 * the peers' nodes go; in each group block, IPv4 root → table 1 hashed on the fourth octet and IPv6 root → table 2
 * hashed on the last byte, where the peers' nodes go.
 */
export function scaffoldFilterLines(layout: ShapingLayout, dir: Direction): string[] {
  const dev = deviceOf(layout, dir);
  const at = offsets(dir);
  const v4 = (block: number) => `filter add dev ${dev} parent ${hex(block)}: prio ${PREF_V4} protocol ip`;
  const v6 = (block: number) => `filter add dev ${dev} parent ${hex(block)}: prio ${PREF_V6} protocol ipv6`;
  const window = `${v4Text(layout.window.network)}/${layout.window.prefix}`;
  const lines = [
    `${v4(ROOT_MAJOR)} u32`,
    `${v4(ROOT_MAJOR)} handle ${hex(ROOT_HT_V4)}: u32 divisor 256`,
    `${v4(ROOT_MAJOR)} handle ${u32Handle(ROOT_HT, 0, 1)} u32 ht ${hex(ROOT_HT)}:: match ip ${at.key} ${window} hashkey mask 0x0000ff00 at ${at.v4} link ${hex(ROOT_HT_V4)}:`,
  ];
  for (const g of layout.groups) {
    const third = (g.network >>> 8) & 0xff;
    lines.push(`${v4(ROOT_MAJOR)} handle ${u32Handle(ROOT_HT_V4, third, 1)} u32 ht ${hex(ROOT_HT_V4)}:${hex(third)}: match ip ${at.key} ${v4Text(g.network)}/24 flowid ${classId(ROOT_MAJOR, g.major)}`);
  }
  const root6 = ROOT_HT + 1;
  lines.push(`${v6(ROOT_MAJOR)} u32`, `${v6(ROOT_MAJOR)} handle ${hex(HT_V6_L1)}: u32 divisor 256`);
  for (let b = 0; b < 256; b++) lines.push(`${v6(ROOT_MAJOR)} handle ${hex(HT_V6_L2 + b)}: u32 divisor 256`);
  lines.push(`${v6(ROOT_MAJOR)} handle ${u32Handle(root6, 0, 1)} u32 ht ${hex(root6)}:: match u32 0 0 at 0 hashkey mask 0x0000ff00 at ${at.v6Last} link ${hex(HT_V6_L1)}:`);
  for (let b = 0; b < 256; b++) {
    lines.push(`${v6(ROOT_MAJOR)} handle ${u32Handle(HT_V6_L1, b, 1)} u32 ht ${hex(HT_V6_L1)}:${hex(b)}: match u32 0 0 at 0 hashkey mask 0x000000ff at ${at.v6Last} link ${hex(HT_V6_L2 + b)}:`);
  }
  for (const g of layout.groups) {
    lines.push(
      `${v4(g.major)} u32`,
      `${v4(g.major)} handle ${hex(GROUP_HT_V4)}: u32 divisor 256`,
      `${v4(g.major)} handle ${u32Handle(ROOT_HT, 0, 1)} u32 ht ${hex(ROOT_HT)}:: match ip ${at.key} ${v4Text(g.network)}/24 hashkey mask 0x000000ff at ${at.v4} link ${hex(GROUP_HT_V4)}:`,
      `${v6(g.major)} u32`,
      `${v6(g.major)} handle ${hex(GROUP_HT_V6)}: u32 divisor 256`,
      `${v6(g.major)} handle ${u32Handle(root6, 0, 1)} u32 ht ${hex(root6)}:: match u32 0 0 at 0 hashkey mask 0x000000ff at ${at.v6Last} link ${hex(GROUP_HT_V6)}:`,
    );
  }
  return lines;
}

/** The interface's ingress: an `ingress` qdisc whose one filter redirects every packet to the IFB device. */
export function ingressLines(layout: ShapingLayout): string[] {
  return [
    `qdisc add dev ${layout.iface} handle ffff: ingress`,
    `filter add dev ${layout.iface} parent ffff: prio 1 protocol all u32 match u32 0 0 action mirred egress redirect dev ${layout.ifb}`,
  ];
}

/**
 * Normalised descriptions of the scaffold filters of each block (root = {@link ROOT_MAJOR}, groups by major), in the
 * form `describeFilter` gives a parsed live filter, so a reconcile can compare the two as sets.
 */
export function scaffoldSignatures(layout: ShapingLayout, dir: Direction): Map<number, string[]> {
  const at = offsets(dir);
  const v4 = `ip/${PREF_V4} u32`;
  const v6 = `ipv6/${PREF_V6} u32`;
  const root = [
    `${v4} ht=${hex(ROOT_HT_V4)} divisor=256`,
    `${v4} ht=root divisor=1`,
    `${v4} fh=root:0:1 link=${hex(ROOT_HT_V4)} match=${word(layout.window.network)}/${word(maskOf(layout.window.prefix))}@${at.v4} hash=0000ff00@${at.v4}`,
    ...layout.groups.map((g) => `${v4} fh=${hex(ROOT_HT_V4)}:${hex((g.network >>> 8) & 0xff)}:1 flowid=${classId(ROOT_MAJOR, g.major)} match=${word(g.network)}/ffffff00@${at.v4}`),
    `${v6} ht=${hex(HT_V6_L1)} divisor=256`,
    ...Array.from({ length: 256 }, (_, b) => `${v6} ht=${hex(HT_V6_L2 + b)} divisor=256`),
    `${v6} ht=root divisor=1`,
    `${v6} fh=root:0:1 link=${hex(HT_V6_L1)} match=00000000/00000000@0 hash=0000ff00@${at.v6Last}`,
    ...Array.from({ length: 256 }, (_, b) => `${v6} fh=${hex(HT_V6_L1)}:${hex(b)}:1 link=${hex(HT_V6_L2 + b)} match=00000000/00000000@0 hash=000000ff@${at.v6Last}`),
  ];
  const out = new Map<number, string[]>([[ROOT_MAJOR, root]]);
  for (const g of layout.groups) {
    out.set(g.major, [
      `${v4} ht=${hex(GROUP_HT_V4)} divisor=256`,
      `${v4} ht=root divisor=1`,
      `${v4} fh=root:0:1 link=${hex(GROUP_HT_V4)} match=${word(g.network)}/ffffff00@${at.v4} hash=000000ff@${at.v4}`,
      `${v6} ht=${hex(GROUP_HT_V6)} divisor=256`,
      `${v6} ht=root divisor=1`,
      `${v6} fh=root:0:1 link=${hex(GROUP_HT_V6)} match=00000000/00000000@0 hash=000000ff@${at.v6Last}`,
    ]);
  }
  return out;
}

/** Signature of the ingress redirect filter. */
export function ingressSignature(layout: ShapingLayout): string {
  return `all/1 u32 fh=root:0:800 match=00000000/00000000@0 mirred=${layout.ifb}`;
}

/** An unsigned 32-bit number as tc prints u32 match words (8 hex digits). */
export function word(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}
