// Per-peer tc operations (class in its group + classification) and their `tc -batch` lines: O(1) lines per peer change.
import { DIRECTIONS, PREF_V4, PREF_V6, classId, hex, slotHandle, type Direction, type PeerTc, type ShapingLayout, type U32Slot } from './tc-layout.ts';

/** One tc object change; `phase` orders a batch so filters never point at a missing or deleted class. */
export type TcOp =
  | { op: 'filter-del'; dir: Direction; slot: U32Slot }
  | { op: 'class-del'; dir: Direction; major: number; minor: number }
  | { op: 'class-set'; dir: Direction; major: number; minor: number; mbit: number; created: boolean }
  | { op: 'filter-add'; dir: Direction; slot: U32Slot };

const PHASE: Record<TcOp['op'], number> = { 'filter-del': 0, 'class-del': 1, 'class-set': 2, 'filter-add': 3 };

/** Sorts ops into a safe order: filter deletions, class deletions, class sets, filter additions (stable). */
export function orderOps(ops: TcOp[]): TcOp[] {
  return ops.map((op, i) => ({ op, i })).sort((a, b) => PHASE[a.op.op] - PHASE[b.op.op] || a.i - b.i).map((x) => x.op);
}

/** The filters a peer has in one direction (none when that direction is unlimited). */
export function peerSlots(peer: PeerTc | undefined, dir: Direction): U32Slot[] {
  return !peer || peer[dir] === 0 ? [] : peer.slots;
}

/** The ops that turn peer `before` into `after` (either may be absent) in both directions. */
export function peerOps(before: PeerTc | undefined, after: PeerTc | undefined): TcOp[] {
  const ops: TcOp[] = [];
  for (const dir of DIRECTIONS) {
    const oldRate = before?.[dir] ?? 0;
    const newRate = after?.[dir] ?? 0;
    const sameClass = oldRate > 0 && newRate > 0 && before!.minor === after!.minor;
    const oldSlots = peerSlots(before, dir);
    const newSlots = peerSlots(after, dir);
    for (const slot of oldSlots) {
      if (!(sameClass && newSlots.some((s) => sameSlot(s, slot)))) ops.push({ op: 'filter-del', dir, slot });
    }
    if (oldRate > 0 && !sameClass) ops.push({ op: 'class-del', dir, major: before!.group!.major, minor: before!.minor });
    if (newRate > 0 && !(sameClass && oldRate === newRate)) {
      ops.push({ op: 'class-set', dir, major: after!.group!.major, minor: after!.minor, mbit: newRate, created: !sameClass });
    }
    for (const slot of newSlots) {
      if (!(sameClass && oldSlots.some((s) => sameSlot(s, slot)))) ops.push({ op: 'filter-add', dir, slot });
    }
  }
  return ops;
}

/** Same filter: same block, handle, address and class. */
function sameSlot(a: U32Slot, b: U32Slot): boolean {
  return a.family === b.family && a.block === b.block && a.ht === b.ht && a.bucket === b.bucket && a.node === b.node &&
    a.addr === b.addr && a.flow.major === b.flow.major && a.flow.minor === b.flow.minor;
}

/** The device a direction's tree lives on. */
export function deviceOf(layout: ShapingLayout, dir: Direction): string {
  return dir === 'download' ? layout.iface : layout.ifb;
}

/**
 * Burst of a class in bytes: 1 ms of its rate, at least 1,600 bytes (tc's own default underflows to 0 bytes at
 * 10 Gbit/s, which would stall the class).
 */
function burstBytes(mbit: number): number {
  return Math.max(1600, mbit * 125);
}

/** HTB quantum of every class: explicit, so the kernel never logs "quantum of class is big" per class. */
const QUANTUM = 1514;

/** `tc -batch` lines of `ops` (already ordered), one or two lines each. */
export function renderOps(layout: ShapingLayout, ops: TcOp[]): string[] {
  const lines: string[] = [];
  for (const op of ops) {
    const dev = deviceOf(layout, op.dir);
    switch (op.op) {
      case 'class-set': {
        const burst = burstBytes(op.mbit);
        const id = classId(op.major, op.minor);
        lines.push(
          `class replace dev ${dev} parent ${hex(op.major)}: classid ${id} htb rate ${op.mbit}mbit ceil ${op.mbit}mbit burst ${burst}b cburst ${burst}b quantum ${QUANTUM}`,
        );
        if (op.created && layout.leaf) lines.push(`qdisc replace dev ${dev} parent ${id} ${layout.leaf}`);
        break;
      }
      case 'class-del':
        lines.push(`class del dev ${dev} classid ${classId(op.major, op.minor)}`);
        break;
      case 'filter-add':
        lines.push(filterAddLine(dev, op.dir, op.slot));
        break;
      case 'filter-del':
        lines.push(filterDelLine(dev, op.slot));
        break;
    }
  }
  return lines;
}

/** `filter add` of a peer filter in its level-2 table of its block (explicit handle, so it can be deleted by handle). */
function filterAddLine(dev: string, dir: Direction, slot: U32Slot): string {
  const key = dir === 'download' ? 'dst' : 'src';
  const match = slot.family === 4 ? `match ip ${key} ${slot.addr}/32` : `match ip6 ${key} ${slot.addr}/128`;
  return `${filterHead('add', dev, slot)} u32 ht ${hex(slot.ht)}:${hex(slot.bucket)}: ${match} flowid ${classId(slot.flow.major, slot.flow.minor)}`;
}

/** `filter del` of a peer filter by its handle. */
function filterDelLine(dev: string, slot: U32Slot): string {
  return `${filterHead('del', dev, slot)} u32`;
}

function filterHead(verb: 'add' | 'del', dev: string, slot: U32Slot): string {
  const [pref, proto] = slot.family === 4 ? [PREF_V4, 'ip'] : [PREF_V6, 'ipv6'];
  return `filter ${verb} dev ${dev} parent ${hex(slot.block)}: prio ${pref} protocol ${proto} handle ${slotHandle(slot)}`;
}
