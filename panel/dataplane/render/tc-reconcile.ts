// Reconcile plan of one shaped interface: live tc state (parsed) against the desired peers → the fewest batch lines.
import {
  DIRECTIONS, GROUP_HT_V4, GROUP_HT_V6, HT_V6_L2, PREF_V4, ROOT_MAJOR, classId, hex,
  type Direction, type PeerTc, type ShapingLayout, type U32Slot,
} from './tc-layout.ts';
import { describeFilter, type TcClass, type TcFilter, type TcQdisc } from './tc-parse.ts';
import { deviceOf, orderOps, peerSlots, renderOps, type TcOp } from './tc-peer.ts';
import { GROUP_RATE_BIT, ingressLines, ingressSignature, scaffoldFilterLines, scaffoldSignatures, trunkLines, word } from './tc-setup.ts';

/** What tc reports for one device. */
export interface LiveDevice {
  qdiscs: TcQdisc[];
  classes: TcClass[];
  /** Filters per filter block: the root's ({@link ROOT_MAJOR}) and each group's that could be read, by major. */
  filters: Map<number, TcFilter[]>;
  /** Filters of the ingress qdisc (`tc filter show dev X ingress`); only read on the WireGuard interface. */
  ingressFilters: TcFilter[];
}

/** An empty device (no link, or nothing on it). */
export function emptyDevice(): LiveDevice {
  return { qdiscs: [], classes: [], filters: new Map(), ingressFilters: [] };
}

/** The plan: batch lines and whether a tree is rebuilt (then the batch runs with `-force`). */
export interface ReconcilePlan {
  lines: string[];
  rebuilt: Array<Direction | 'ingress'>;
}

/** True for a peer filter of the block `block`: a node in a root IPv6 level-2 table, or in a group's peer tables. */
export function isPeerFilter(f: TcFilter, block: number): boolean {
  if (!f.fh || f.divisor !== null || f.fh.node === 0) return false;
  if (block === ROOT_MAJOR) return f.fh.ht >= HT_V6_L2 && f.fh.ht < HT_V6_L2 + 0x100;
  return f.fh.ht === GROUP_HT_V4 || f.fh.ht === GROUP_HT_V6;
}

/** The match words tc prints for a peer filter (`value/mask@offset`). */
function slotMatches(slot: U32Slot, dir: Direction): string[] {
  if (slot.family === 4) return [`${word(slot.words[0])}/ffffffff@${dir === 'download' ? 16 : 12}`];
  const base = dir === 'download' ? 24 : 8;
  return slot.words.map((w, i) => `${word(w)}/ffffffff@${base + 4 * i}`);
}

/**
 * Plans `ensure`: a full rebuild of a tree whose root, groups or scaffold filters differ (a tree of another layout,
 * such as the flat one of earlier releases, is rebuilt this way), else per-object fixes of the peer classes and filters.
 */
export function planReconcile(layout: ShapingLayout, peers: PeerTc[], live: Record<Direction, LiveDevice>): ReconcilePlan {
  const rebuilt: ReconcilePlan['rebuilt'] = [];
  const teardown: string[] = [];
  const setup: string[] = [];
  const ingressSetup: string[] = [];
  const ops: TcOp[] = [];
  const leafFixes: string[] = [];
  for (const dir of DIRECTIONS) {
    const state = live[dir];
    if (needsRebuild(layout, dir, state)) {
      rebuilt.push(dir);
      const root = state.qdiscs.find((q) => q.parent === 'root');
      // The upload tree (built last) goes first: see the class order below.
      if (root && root.handle !== '0:') teardown.unshift(`qdisc del dev ${deviceOf(layout, dir)} root`);
      // Classes before filters: nothing has to be rebound to a class created into an empty filter set. Classes in
      // descending minor: the kernel keeps every filter block on one host-wide list, newest first, and finds a block
      // there to drop it, so when the tree goes (in ascending class order) each block it drops is near the front.
      const classes: TcOp[] = [];
      const filters: TcOp[] = [];
      for (const peer of [...peers].sort((a, b) => b.minor - a.minor)) {
        if (peer[dir] === 0) continue;
        classes.push({ op: 'class-set', dir, major: peer.group!.major, minor: peer.minor, mbit: peer[dir], created: true });
      }
      for (const peer of peers) for (const slot of peerSlots(peer, dir)) filters.push({ op: 'filter-add', dir, slot });
      setup.push(...trunkLines(layout, dir), ...renderOps(layout, classes), ...scaffoldFilterLines(layout, dir), ...renderOps(layout, filters));
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
    if (ingress) teardown.unshift(`qdisc del dev ${layout.iface} ingress`);
    ingressSetup.push(...ingressLines(layout));
  }
  // The redirect comes last, once the upload tree it feeds is in place.
  return { lines: [...teardown, ...setup, ...renderOps(layout, orderOps(ops)), ...leafFixes, ...ingressSetup], rebuilt };
}

/** Whether the root, the groups (class + child HTB) or a block's scaffold filters differ from the layout's. */
function needsRebuild(layout: ShapingLayout, dir: Direction, state: LiveDevice): boolean {
  const root = state.qdiscs.find((q) => q.parent === 'root');
  if (!root || root.kind !== 'htb' || root.handle !== `${hex(ROOT_MAJOR)}:` || root.htbDefault !== '0') return true;
  const majors = new Set(layout.groups.map((g) => g.major));
  const groupClasses = state.classes.filter((c) => c.major === hex(ROOT_MAJOR));
  if (groupClasses.length !== layout.groups.length) return true;
  for (const c of groupClasses) {
    if (!majors.has(c.minor) || c.parent !== 'root' || c.leaf !== `${hex(c.minor)}:` || c.rateBit !== GROUP_RATE_BIT || c.ceilBit !== GROUP_RATE_BIT) return true;
  }
  if (state.classes.some((c) => c.major !== hex(ROOT_MAJOR) && (!majors.has(parseInt(c.major, 16)) || c.parent !== 'root'))) return true;
  for (const g of layout.groups) {
    const child = state.qdiscs.find((q) => q.handle === `${hex(g.major)}:`);
    if (!child || child.kind !== 'htb' || child.parent !== classId(ROOT_MAJOR, g.major) || child.htbDefault !== '0') return true;
  }
  for (const [block, want] of scaffoldSignatures(layout, dir)) {
    const have = (state.filters.get(block) ?? []).filter((f) => !isPeerFilter(f, block)).map(describeFilter).sort();
    const sorted = [...want].sort();
    if (sorted.length !== have.length || sorted.some((s, i) => s !== have[i])) return true;
  }
  return false;
}

function diffTree(layout: ShapingLayout, dir: Direction, peers: PeerTc[], state: LiveDevice, ops: TcOp[], leafFixes: string[]): void {
  const dev = deviceOf(layout, dir);
  const leafKind = new Map(state.qdiscs.filter((q) => q.parent !== 'root' && q.parent !== 'ingress').map((q) => [q.parent, q.kind]));
  const liveClasses = new Map(state.classes.filter((c) => c.major !== hex(ROOT_MAJOR)).map((c) => [`${c.major}:${hex(c.minor)}`, c]));
  const wantFilters = new Map<string, U32Slot>();
  const wantClasses = new Set<string>();
  for (const peer of peers) {
    const mbit = peer[dir];
    if (mbit === 0) continue;
    const id = classId(peer.group!.major, peer.minor);
    wantClasses.add(id);
    for (const slot of peerSlots(peer, dir)) wantFilters.set(filterKey(slot.block, slot.ht, slot.bucket, slot.node), slot);
    const have = liveClasses.get(id);
    if (!have) {
      ops.push({ op: 'class-set', dir, major: peer.group!.major, minor: peer.minor, mbit, created: true });
      continue;
    }
    const bits = mbit * 1e6;
    if (have.rateBit !== bits || have.ceilBit !== bits) ops.push({ op: 'class-set', dir, major: peer.group!.major, minor: peer.minor, mbit, created: false });
    const haveLeaf = have.leaf ? (leafKind.get(id) ?? '?') : null;
    if (haveLeaf !== layout.leaf) leafFixes.push(layout.leaf ? `qdisc replace dev ${dev} parent ${id} ${layout.leaf}` : `qdisc del dev ${dev} parent ${id}`);
  }
  for (const [block, filters] of state.filters) {
    for (const f of filters) {
      if (!isPeerFilter(f, block)) continue;
      const key = filterKey(block, f.fh!.ht, f.fh!.bucket, f.fh!.node);
      const want = wantFilters.get(key);
      if (want && f.flowid === classId(want.flow.major, want.flow.minor) && sameList(f.matches, slotMatches(want, dir))) {
        wantFilters.delete(key);
        continue;
      }
      ops.push({ op: 'filter-del', dir, slot: liveSlot(block, f) });
    }
  }
  for (const slot of wantFilters.values()) ops.push({ op: 'filter-add', dir, slot });
  for (const [id, c] of liveClasses) if (!wantClasses.has(id)) ops.push({ op: 'class-del', dir, major: parseInt(c.major, 16), minor: c.minor });
}

/** A slot for deleting a live filter by its handle (address and class do not matter for a delete). */
function liveSlot(block: number, f: TcFilter): U32Slot {
  return { family: f.pref === PREF_V4 ? 4 : 6, addr: '', words: [], block, ht: f.fh!.ht, bucket: f.fh!.bucket, node: f.fh!.node, flow: { major: 0, minor: 0 } };
}

function filterKey(block: number, ht: number, bucket: number, node: number): string {
  return `${block}/${ht}:${bucket}:${node}`;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
