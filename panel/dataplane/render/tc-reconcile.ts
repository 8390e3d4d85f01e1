// Reconcile plan of one shaped interface: live tc state (parsed) against the desired peers → the fewest batch lines.
import {
  DIRECTIONS, HT_V4_L2, HT_V6_L2, PREF_V4, hex, type Direction, type PeerTc, type ShapingLayout, type U32Slot,
} from './tc-layout.ts';
import { describeFilter, type TcClass, type TcFilter, type TcQdisc } from './tc-parse.ts';
import { deviceOf, orderOps, peerSlots, renderOps, type TcOp } from './tc-peer.ts';
import { ingressLines, ingressSignature, scaffoldLines, scaffoldSignatures, word } from './tc-setup.ts';

/** What tc reports for one device. */
export interface LiveDevice {
  qdiscs: TcQdisc[];
  classes: TcClass[];
  /** Filters of the root qdisc (`tc filter show dev X`). */
  filters: TcFilter[];
  /** Filters of the ingress qdisc (`tc filter show dev X ingress`); only read on the WireGuard interface. */
  ingressFilters: TcFilter[];
}

/** The plan: batch lines and whether a tree is rebuilt (then the batch runs with `-force`). */
export interface ReconcilePlan {
  lines: string[];
  rebuilt: Array<Direction | 'ingress'>;
}

/** True for a peer filter: a node in a level-2 table. */
export function isPeerFilter(f: TcFilter): boolean {
  if (!f.fh || f.divisor !== null || f.fh.node === 0) return false;
  return (f.fh.ht >= HT_V4_L2 && f.fh.ht < HT_V4_L2 + 0x100) || (f.fh.ht >= HT_V6_L2 && f.fh.ht < HT_V6_L2 + 0x100);
}

/** The match words tc prints for a peer filter (`value/mask@offset`). */
export function slotMatches(slot: U32Slot, dir: Direction): string[] {
  if (slot.family === 4) return [`${word(slot.words[0])}/ffffffff@${dir === 'download' ? 16 : 12}`];
  const base = dir === 'download' ? 24 : 8;
  return slot.words.map((w, i) => `${word(w)}/ffffffff@${base + 4 * i}`);
}

/** Plans `ensure`: full rebuild of a tree whose root or scaffold differs, else per-object fixes. */
export function planReconcile(layout: ShapingLayout, peers: PeerTc[], live: Record<Direction, LiveDevice>): ReconcilePlan {
  const rebuilt: ReconcilePlan['rebuilt'] = [];
  const teardown: string[] = [];
  const setup: string[] = [];
  const ingressSetup: string[] = [];
  const ops: TcOp[] = [];
  const leafFixes: string[] = [];
  for (const dir of DIRECTIONS) {
    const dev = deviceOf(layout, dir);
    const state = live[dir];
    if (needsRebuild(layout, dir, state)) {
      rebuilt.push(dir);
      const root = state.qdiscs.find((q) => q.parent === 'root');
      if (root && root.handle !== '0:') teardown.push(`qdisc del dev ${dev} root`);
      // Classes go in before any filter: the kernel walks every filter of the qdisc (every u32 bucket) to bind
      // each new class, so classes created into an empty filter set keep a rebuild linear.
      const [rootLine, ...scaffold] = scaffoldLines(layout, dir);
      const classes: TcOp[] = [];
      const filters: TcOp[] = [];
      for (const peer of peers) {
        if (peer[dir] === 0) continue;
        classes.push({ op: 'class-set', dir, minor: peer.minor, mbit: peer[dir], created: true });
        for (const slot of peerSlots(layout, peer, dir)) filters.push({ op: 'filter-add', dir, slot, minor: peer.minor });
      }
      setup.push(rootLine, ...renderOps(layout, classes), ...scaffold, ...renderOps(layout, filters));
      continue;
    }
    diffTree(layout, dir, peers, state, ops, leafFixes);
  }
  const down = live.download;
  const ingress = down.qdiscs.find((q) => q.parent === 'ingress');
  const redirects = down.ingressFilters.filter((f) => f.divisor === null);
  const ingressRight =
    ingress?.kind === 'ingress' && redirects.length === 1 && describeFilter(redirects[0]) === ingressSignature(layout);
  if (!ingressRight) {
    rebuilt.push('ingress');
    if (ingress) teardown.push(`qdisc del dev ${layout.iface} ingress`);
    ingressSetup.push(...ingressLines(layout));
  }
  // The redirect comes last, once the upload tree it feeds is in place.
  return { lines: [...teardown, ...setup, ...renderOps(layout, orderOps(ops)), ...leafFixes, ...ingressSetup], rebuilt };
}

function needsRebuild(layout: ShapingLayout, dir: Direction, state: LiveDevice): boolean {
  const root = state.qdiscs.find((q) => q.parent === 'root');
  if (!root || root.kind !== 'htb' || root.handle !== '1:' || root.htbDefault !== '0') return true;
  if (state.classes.some((c) => c.major !== '1' || c.parent !== 'root')) return true;
  const want = scaffoldSignatures(layout, dir).sort();
  const have = state.filters.filter((f) => !isPeerFilter(f)).map(describeFilter).sort();
  return want.length !== have.length || want.some((s, i) => s !== have[i]);
}

function diffTree(layout: ShapingLayout, dir: Direction, peers: PeerTc[], state: LiveDevice, ops: TcOp[], leafFixes: string[]): void {
  const dev = deviceOf(layout, dir);
  const leafKind = new Map(state.qdiscs.filter((q) => q.parent !== 'root' && q.parent !== 'ingress').map((q) => [q.parent, q.kind]));
  const liveClasses = new Map(state.classes.map((c) => [c.minor, c]));
  const wantFilters = new Map<string, { slot: U32Slot; minor: number }>();
  const wantClasses = new Set<number>();
  for (const peer of peers) {
    const mbit = peer[dir];
    if (mbit === 0) continue;
    wantClasses.add(peer.minor);
    for (const slot of peerSlots(layout, peer, dir)) wantFilters.set(fhKey(slot.ht, slot.bucket, slot.node), { slot, minor: peer.minor });
    const have = liveClasses.get(peer.minor);
    const bits = mbit * 1e6;
    const haveLeaf = have?.leaf ? (leafKind.get(`1:${hex(peer.minor)}`) ?? '?') : null;
    if (!have) {
      ops.push({ op: 'class-set', dir, minor: peer.minor, mbit, created: true });
      continue;
    }
    if (have.rateBit !== bits || have.ceilBit !== bits) ops.push({ op: 'class-set', dir, minor: peer.minor, mbit, created: false });
    if (haveLeaf !== layout.leaf) {
      leafFixes.push(layout.leaf ? `qdisc replace dev ${dev} parent 1:${hex(peer.minor)} ${layout.leaf}` : `qdisc del dev ${dev} parent 1:${hex(peer.minor)}`);
    }
  }
  const liveFilters = new Map<string, TcFilter>();
  for (const f of state.filters) if (isPeerFilter(f)) liveFilters.set(fhKey(f.fh!.ht, f.fh!.bucket, f.fh!.node), f);
  for (const [key, f] of liveFilters) {
    const want = wantFilters.get(key);
    const right = want && f.flowid === `1:${hex(want.minor)}` && sameList(f.matches, slotMatches(want.slot, dir));
    if (right) {
      wantFilters.delete(key);
      continue;
    }
    ops.push({ op: 'filter-del', dir, slot: liveSlot(f) });
  }
  for (const { slot, minor } of wantFilters.values()) ops.push({ op: 'filter-add', dir, slot, minor });
  for (const minor of liveClasses.keys()) if (!wantClasses.has(minor)) ops.push({ op: 'class-del', dir, minor });
}

/** A slot for deleting a live filter by its handle (the address does not matter for a delete). */
function liveSlot(f: TcFilter): U32Slot {
  return { family: f.pref === PREF_V4 ? 4 : 6, addr: '', words: [], ht: f.fh!.ht, bucket: f.fh!.bucket, node: f.fh!.node };
}

function fhKey(ht: number, bucket: number, node: number): string {
  return `${ht}:${bucket}:${node}`;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
