// The text view of an interface's (or one peer's) shaping with counters: one format for the linux and simulated shapers.
import { hex, type Direction, type ShapingLayout } from './tc-layout.ts';
import type { TcStats } from './tc-parse.ts';
import { deviceOf } from './tc-peer.ts';

/** One class as the view shows it. */
export interface ViewClass {
  minor: number;
  rateBit: number;
  ceilBit: number;
  /** Leaf qdisc kind, or null for HTB's default pfifo. */
  leaf: string | null;
  stats: TcStats;
  /** Key and addresses of the peer that owns the minor, when known. */
  peer: { key: string; ipv4: string | null; ipv6: string | null } | null;
  /** The peer filters pointing at the class, as `handle family address`. */
  filters: Array<{ handle: string; family: 4 | 6; addr: string }>;
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
 * wg1 download (egress of wg1): htb 1: default 0, classifier u32, leaf pfifo; Sent 0 bytes 0 pkt (dropped 0, overlimits 0)
 *   class 1:2 rate 8Mbit ceil 8Mbit leaf pfifo peer <key> 10.0.1.2; Sent 0 bytes 0 pkt (dropped 0, overlimits 0)
 *     filter 102:2:1 ip 10.0.1.2 flowid 1:2
 * ifb-wg1 upload (ingress of wg1): ...
 * ```
 * A peer's view keeps only its classes (with their tree's header line); it is empty when the peer has none.
 */
export function renderView(layout: ShapingLayout, trees: ViewTree[], onlyMinor?: number): string {
  const lines: string[] = [];
  for (const tree of trees) {
    const classes = [...tree.classes]
      .filter((c) => onlyMinor === undefined || c.minor === onlyMinor)
      .sort((a, b) => a.minor - b.minor);
    if (onlyMinor !== undefined && classes.length === 0) continue;
    const where = tree.dir === 'download' ? `egress of ${layout.iface}` : `ingress of ${layout.iface}`;
    const root = tree.root ? `htb 1: default 0, classifier ${layout.classifier}, leaf ${layout.leaf ?? 'pfifo'}; ${stats(tree.root)}` : 'not set up';
    lines.push(`${deviceOf(layout, tree.dir)} ${tree.dir} (${where}): ${root}`);
    for (const c of classes) {
      const peer = c.peer ? ` peer ${c.peer.key}${c.peer.ipv4 ? ` ${c.peer.ipv4}` : ''}${c.peer.ipv6 ? ` ${c.peer.ipv6}` : ''}` : ' peer unknown';
      lines.push(`  class 1:${hex(c.minor)} rate ${rateText(c.rateBit)} ceil ${rateText(c.ceilBit)} leaf ${c.leaf ?? 'pfifo'}${peer}; ${stats(c.stats)}`);
      if (layout.classifier === 'flow' && c.peer?.ipv4) lines.push(`    flow map ${tree.dir === 'download' ? 'dst' : 'src'} ${c.peer.ipv4} classid 1:${hex(c.minor)}`);
      for (const f of [...c.filters].sort((a, b) => a.family - b.family || a.handle.localeCompare(b.handle))) {
        lines.push(`    filter ${f.handle} ${f.family === 4 ? 'ip' : 'ip6'} ${f.addr} flowid 1:${hex(c.minor)}`);
      }
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
