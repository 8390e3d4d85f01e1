// The text view of an interface's (or one peer's) shaping with counters: one format for the linux and simulated shapers.
import { classId, hex, type Direction, type ShapingLayout } from './tc-layout.ts';
import type { TcStats } from './tc-parse.ts';
import { deviceOf } from './tc-peer.ts';

/** One peer class as the view shows it. */
export interface ViewClass {
  /** Its group's major (the child HTB it lives in). */
  major: number;
  minor: number;
  rateBit: number;
  ceilBit: number;
  /** Leaf qdisc kind, or null for HTB's default pfifo. */
  leaf: string | null;
  stats: TcStats;
  /** Key and addresses of the peer that owns the minor, when known. */
  peer: { key: string; ipv4: string | null; ipv6: string | null } | null;
  /** The peer filters pointing at the class or naming its address: block (qdisc major), handle, family, address, class. */
  filters: ViewFilter[];
}

/** One peer filter as the view shows it. */
export interface ViewFilter {
  block: number;
  handle: string;
  family: 4 | 6;
  addr: string;
  /** The class it sends to (`major:minor`). */
  flowid: string;
}

/** One direction's tree. */
export interface ViewTree {
  dir: Direction;
  root: TcStats | null;
  classes: ViewClass[];
}

/**
 * Renders the view. Whole interface:
 * ```
 * wg1 download (egress of wg1): htb 1: default 0, 1 group of /24, classifier u32, leaf pfifo; Sent 0 bytes 0 pkt (dropped 0, overlimits 0)
 *   class 100:2 rate 8Mbit ceil 8Mbit leaf pfifo peer <key> 10.0.1.2 fd00::2; Sent 0 bytes 0 pkt (dropped 0, overlimits 0)
 *     filter 100: 1:2:1 ip 10.0.1.2 flowid 100:2
 *     filter 1: 200:2:3 ip6 fd00::2 flowid 1:100
 *     filter 100: 2:2:3 ip6 fd00::2 flowid 100:2
 * ifb-wg1 upload (ingress of wg1): ...
 * ```
 * (`filter <block> <handle>`: the root block's IPv6 node picks the group, the group block's the class.) A peer's
 * view keeps only its classes (with their tree's header line); it is empty when the peer has none.
 */
export function renderView(layout: ShapingLayout, trees: ViewTree[], onlyMinor?: number): string {
  const lines: string[] = [];
  const groups = layout.groups.length;
  for (const tree of trees) {
    const classes = [...tree.classes]
      .filter((c) => onlyMinor === undefined || c.minor === onlyMinor)
      .sort((a, b) => a.minor - b.minor);
    if (onlyMinor !== undefined && classes.length === 0) continue;
    const where = tree.dir === 'download' ? `egress of ${layout.iface}` : `ingress of ${layout.iface}`;
    const root = tree.root
      ? `htb 1: default 0, ${groups} ${groups === 1 ? 'group' : 'groups'} of /24, classifier u32, leaf ${layout.leaf ?? 'pfifo'}; ${stats(tree.root)}`
      : 'not set up';
    lines.push(`${deviceOf(layout, tree.dir)} ${tree.dir} (${where}): ${root}`);
    for (const c of classes) {
      const peer = c.peer ? ` peer ${c.peer.key}${c.peer.ipv4 ? ` ${c.peer.ipv4}` : ''}${c.peer.ipv6 ? ` ${c.peer.ipv6}` : ''}` : ' peer unknown';
      lines.push(`  class ${classId(c.major, c.minor)} rate ${rateText(c.rateBit)} ceil ${rateText(c.ceilBit)} leaf ${c.leaf ?? 'pfifo'}${peer}; ${stats(c.stats)}`);
      const order = (f: ViewFilter) => [f.family, f.block === c.major ? 1 : 0];
      const sorted = [...c.filters].sort((a, b) => order(a)[0] - order(b)[0] || order(a)[1] - order(b)[1] || a.handle.localeCompare(b.handle));
      for (const f of sorted) lines.push(`    filter ${hex(f.block)}: ${f.handle} ${f.family === 4 ? 'ip' : 'ip6'} ${f.addr} flowid ${f.flowid}`);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** A rate in tc's style: the largest unit that divides it (`8Mbit`, `1500Mbit`, `10Gbit`). */
export function rateText(bit: number): string {
  for (const [unit, scale] of [['T', 1e12], ['G', 1e9], ['M', 1e6], ['K', 1e3]] as const) {
    if (bit >= scale && bit % scale === 0) return `${bit / scale}${unit}bit`;
  }
  return `${bit}bit`;
}

function stats(s: TcStats): string {
  return `Sent ${s.bytes} bytes ${s.packets} pkt (dropped ${s.dropped}, overlimits ${s.overlimits})`;
}
