// Root setup of a shaped interface as `tc -batch` lines: HTB roots, the IFB redirect and the classification scaffold.
import {
  HT_V4_L1, HT_V4_L2, HT_V6_L1, HT_V6_L2, PREF_V4, PREF_V6, hex, maskOf, u32Handle, v4Text,
  type Direction, type ShapingLayout,
} from './tc-layout.ts';
import { deviceOf } from './tc-peer.ts';

/** Root hash table tc gives the first u32 instance on a fresh qdisc (the next one gets 801:). */
export const ROOT_HT = 0x800;

/** Offsets (from the network header) of the address a direction keys on. */
function offsets(dir: Direction): { v4: number; v6Last: number } {
  // IPv4: saddr at 12, daddr at 16. IPv6: saddr at 8, daddr at 24; the last 32-bit word is 12 bytes further.
  return dir === 'download' ? { v4: 16, v6Last: 36 } : { v4: 12, v6Last: 20 };
}

/** Root hash table of the IPv6 u32 instance: created second under u32, first under cls_flow. */
export function rootHtV6(layout: ShapingLayout): number {
  return layout.classifier === 'u32' ? ROOT_HT + 1 : ROOT_HT;
}

/**
 * The scaffold of one direction's tree on a device whose root qdisc was just (re)created: HTB `1:` with
 * `default 0` (unclassified packets bypass shaping), IPv4 classification (cls_flow map, or u32 tables: root →
 * level 1 hashed on the third octet → level 2 per third octet hashed on the fourth), and IPv6 u32 tables (root →
 * level 1 on byte 14 → level 2 on byte 15). Peer filters then go into level-2 buckets, one node each.
 */
export function scaffoldLines(layout: ShapingLayout, dir: Direction): string[] {
  const dev = deviceOf(layout, dir);
  const key = dir === 'download' ? 'dst' : 'src';
  const at = offsets(dir);
  const lines = [`qdisc add dev ${dev} root handle 1: htb default 0`];
  const v4 = `filter add dev ${dev} parent 1: prio ${PREF_V4} protocol ip`;
  if (layout.classifier === 'flow') {
    const hostMask = (2 ** (32 - layout.window.prefix) - 1) >>> 0;
    // map: minor = (addr & hostmask) + 0xffffffff (i.e. -1, mod 2^32) + baseclass 1:1 = the host offset.
    lines.push(`${v4} handle 1 flow map key ${key} and 0x${hex(hostMask)} addend 0xffffffff baseclass 1:1`);
  } else {
    lines.push(`${v4} u32`);
    lines.push(`${v4} handle ${hex(HT_V4_L1)}: u32 divisor 256`);
    for (const third of layout.thirds) lines.push(`${v4} handle ${hex(HT_V4_L2 + third)}: u32 divisor 256`);
    const window = `${v4Text(layout.window.network)}/${layout.window.prefix}`;
    lines.push(
      `${v4} handle ${u32Handle(ROOT_HT, 0, 1)} u32 ht ${hex(ROOT_HT)}:: match ip ${key} ${window} hashkey mask 0x0000ff00 at ${at.v4} link ${hex(HT_V4_L1)}:`,
    );
    const base = (layout.window.network & maskOf(16)) >>> 0;
    for (const third of layout.thirds) {
      const net = `${v4Text((base | (third << 8)) >>> 0)}/24`;
      lines.push(
        `${v4} handle ${u32Handle(HT_V4_L1, third, 1)} u32 ht ${hex(HT_V4_L1)}:${hex(third)}: match ip ${key} ${net} hashkey mask 0x000000ff at ${at.v4} link ${hex(HT_V4_L2 + third)}:`,
      );
    }
  }
  const v6 = `filter add dev ${dev} parent 1: prio ${PREF_V6} protocol ipv6`;
  const root6 = rootHtV6(layout);
  lines.push(`${v6} u32`);
  lines.push(`${v6} handle ${hex(HT_V6_L1)}: u32 divisor 256`);
  for (let b = 0; b < 256; b++) lines.push(`${v6} handle ${hex(HT_V6_L2 + b)}: u32 divisor 256`);
  lines.push(
    `${v6} handle ${u32Handle(root6, 0, 1)} u32 ht ${hex(root6)}:: match u32 0 0 at 0 hashkey mask 0x0000ff00 at ${at.v6Last} link ${hex(HT_V6_L1)}:`,
  );
  for (let b = 0; b < 256; b++) {
    lines.push(
      `${v6} handle ${u32Handle(HT_V6_L1, b, 1)} u32 ht ${hex(HT_V6_L1)}:${hex(b)}: match u32 0 0 at 0 hashkey mask 0x000000ff at ${at.v6Last} link ${hex(HT_V6_L2 + b)}:`,
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
 * Normalised descriptions of the scaffold filters `scaffoldLines` creates, in the form `describeFilter` gives a
 * parsed live filter, so a reconcile can compare the two as sets.
 */
export function scaffoldSignatures(layout: ShapingLayout, dir: Direction): string[] {
  const key = dir === 'download' ? 'dst' : 'src';
  const at = offsets(dir);
  const out: string[] = [];
  if (layout.classifier === 'flow') {
    out.push(`ip/${PREF_V4} flow keys=${key}`);
  } else {
    out.push(`ip/${PREF_V4} u32 ht=${hex(HT_V4_L1)} divisor=256`);
    for (const third of layout.thirds) out.push(`ip/${PREF_V4} u32 ht=${hex(HT_V4_L2 + third)} divisor=256`);
    out.push(`ip/${PREF_V4} u32 ht=root divisor=1`);
    const mask = maskOf(layout.window.prefix);
    out.push(
      `ip/${PREF_V4} u32 fh=root:0:1 link=${hex(HT_V4_L1)} match=${word(layout.window.network)}/${word(mask)}@${at.v4} hash=0000ff00@${at.v4}`,
    );
    const base = (layout.window.network & maskOf(16)) >>> 0;
    for (const third of layout.thirds) {
      out.push(
        `ip/${PREF_V4} u32 fh=${hex(HT_V4_L1)}:${hex(third)}:1 link=${hex(HT_V4_L2 + third)} match=${word((base | (third << 8)) >>> 0)}/ffffff00@${at.v4} hash=000000ff@${at.v4}`,
      );
    }
  }
  out.push(`ipv6/${PREF_V6} u32 ht=${hex(HT_V6_L1)} divisor=256`);
  for (let b = 0; b < 256; b++) out.push(`ipv6/${PREF_V6} u32 ht=${hex(HT_V6_L2 + b)} divisor=256`);
  out.push(`ipv6/${PREF_V6} u32 ht=root divisor=1`);
  out.push(`ipv6/${PREF_V6} u32 fh=root:0:1 link=${hex(HT_V6_L1)} match=00000000/00000000@0 hash=0000ff00@${at.v6Last}`);
  for (let b = 0; b < 256; b++) {
    out.push(`ipv6/${PREF_V6} u32 fh=${hex(HT_V6_L1)}:${hex(b)}:1 link=${hex(HT_V6_L2 + b)} match=00000000/00000000@0 hash=000000ff@${at.v6Last}`);
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
