// The in-memory twin of the tc shaper: same layout, same checks and texts, same view format (counters stay 0).
import { DIRECTIONS, layoutOf, slotHandle, type Direction, type ShapingLayout } from '../../render/tc-layout.ts';
import type { TcStats } from '../../render/tc-parse.ts';
import type { TcOp } from '../../render/tc-peer.ts';
import { renderView, type ViewClass, type ViewTree } from '../../render/tc-view.ts';
import { PeerBook } from '../peer-book.ts';
import {
  SHAPING_TEXTS, ShapingError, parseChanges, parsePeers, parseTarget,
  type ShapedPeer, type Shaper, type ShapingCapabilities, type ShapingChanges, type ShapingTarget,
} from '../shaping.ts';

/** Options of {@link SimulatedShaper}. */
export interface SimulatedShaperOptions {
  /** What the simulated kernel offers (default: u32 and ifb, no flow, no fair leaf — this sandbox's kernel). */
  capabilities?: ShapingCapabilities;
  /** Whether a WireGuard interface exists (default: every name does); e.g. the simulated driver's list. */
  interfaceExists?(name: string): boolean | Promise<boolean>;
  /** The simulated kernel state; share one between two shapers to simulate a panel restart. */
  kernel?: SimulatedTc;
}

interface SimTree {
  classes: Map<number, number>;
  filters: Map<string, { family: 4 | 6; addr: string; minor: number }>;
  /** Filter handles pointing at each class minor (the kernel's per-class filter count). */
  bound: Map<number, Set<string>>;
}

interface SimIface {
  layout: ShapingLayout;
  trees: Record<Direction, SimTree>;
}

/** The tc state of the simulated kernel: the trees of each shaped interface, outliving a shaper (a "restart"). */
export class SimulatedTc {
  readonly ifaces = new Map<string, SimIface>();
}

const ZERO: TcStats = { bytes: 0, packets: 0, dropped: 0, overlimits: 0 };

/** {@link Shaper} in memory; `stats()` counts ensure/apply calls and tc objects changed. */
export class SimulatedShaper implements Shaper {
  /** The peers of each ensured interface (the shaper's memory, lost on restart like the linux shaper's). */
  private readonly books = new Map<string, PeerBook>();
  private readonly kernel: SimulatedTc;
  private readonly caps: ShapingCapabilities;
  private counters = { ensureCalls: 0, applyCalls: 0, rebuilds: 0, objectChanges: 0 };

  constructor(private readonly opts: SimulatedShaperOptions = {}) {
    this.caps = opts.capabilities ?? { flow: false, u32: true, ifb: true, leaf: null };
    this.kernel = opts.kernel ?? new SimulatedTc();
  }

  async capabilities(): Promise<ShapingCapabilities> {
    return { ...this.caps };
  }

  async ensure(target: ShapingTarget, peers: ShapedPeer[]): Promise<void> {
    const t = parseTarget(target);
    const list = parsePeers(peers);
    const layout = layoutOf(t, this.caps);
    const book = PeerBook.of(layout, list);
    await this.requireInterface(t.name);
    this.counters.ensureCalls++;
    this.books.delete(t.name);
    // The desired trees, built as a fresh tree would be; then compared with the kernel's, object by object.
    const desired: SimIface = { layout, trees: { download: emptyTree(), upload: emptyTree() } };
    this.run(desired, new PeerBook(layout).stage({ upsert: list, remove: [] }).ops, false);
    const current = this.kernel.ifaces.get(t.name);
    if (!current || !sameLayout(current.layout, layout)) {
      this.counters.rebuilds++;
      this.counters.objectChanges += objectCount(desired);
    } else {
      this.counters.objectChanges += DIRECTIONS.reduce((n, dir) => n + treeDiff(current.trees[dir], desired.trees[dir]), 0);
    }
    this.kernel.ifaces.set(t.name, desired);
    this.books.set(t.name, book);
  }

  async apply(target: ShapingTarget, changes: ShapingChanges): Promise<void> {
    const t = parseTarget(target);
    const c = parseChanges(changes);
    const book = this.books.get(t.name);
    const iface = this.kernel.ifaces.get(t.name);
    if (!book || !iface || !sameLayout(book.layout, layoutOf(t, this.caps))) throw new ShapingError(SHAPING_TEXTS.notEnsured(t.name));
    this.counters.applyCalls++;
    const staged = book.stage(c);
    this.run(iface, staged.ops, true);
    staged.commit();
  }

  async remove(iface: string): Promise<void> {
    this.books.delete(iface);
    this.kernel.ifaces.delete(iface);
  }

  async show(iface: string, peerKey?: string): Promise<string> {
    const book = this.books.get(iface);
    const kernel = this.kernel.ifaces.get(iface);
    if (!book || !kernel) {
      await this.requireInterface(iface);
      throw new ShapingError(SHAPING_TEXTS.notEnsured(iface));
    }
    const state = { layout: kernel.layout, book, trees: kernel.trees };
    const trees: ViewTree[] = DIRECTIONS.map((dir) => ({
      dir,
      root: ZERO,
      classes: [...state.trees[dir].classes].map(([minor, mbit]): ViewClass => {
        const peer = state.book.ownerOf(minor);
        return {
          minor,
          rateBit: mbit * 1e6,
          ceilBit: mbit * 1e6,
          leaf: state.layout.leaf,
          stats: ZERO,
          peer: peer ? { key: peer.key, ipv4: peer.v4?.addr ?? null, ipv6: peer.v6?.addr ?? null } : null,
          filters: [...(state.trees[dir].bound.get(minor) ?? [])].map((handle) => {
            const f = state.trees[dir].filters.get(handle)!;
            return { handle, family: f.family, addr: f.addr };
          }),
        };
      }),
    }));
    if (peerKey === undefined) return renderView(state.layout, trees);
    const peer = state.book.get(peerKey);
    return peer && (peer.download > 0 || peer.upload > 0) ? renderView(state.layout, trees, peer.minor) : '';
  }

  /** Test hook: calls made and tc objects changed so far. */
  stats(): { ensureCalls: number; applyCalls: number; rebuilds: number; objectChanges: number } {
    return { ...this.counters };
  }

  private async requireInterface(name: string): Promise<void> {
    const exists = this.opts.interfaceExists ? await this.opts.interfaceExists(name) : true;
    if (!exists) throw new ShapingError(SHAPING_TEXTS.noInterface(name));
  }

  /** Applies ops with the kernel's invariants: a class with filters cannot go, a filter handle is unique. */
  private run(iface: SimIface, ops: TcOp[], count: boolean): void {
    for (const op of ops) {
      const tree = iface.trees[op.dir];
      if (count) this.counters.objectChanges++;
      switch (op.op) {
        case 'class-set':
          tree.classes.set(op.minor, op.mbit);
          break;
        case 'class-del':
          if (tree.bound.get(op.minor)?.size) throw new ShapingError('tc: Error: HTB class in use');
          tree.classes.delete(op.minor);
          break;
        case 'filter-add': {
          const handle = slotHandle(op.slot);
          if (tree.filters.has(handle)) throw new ShapingError('tc: RTNETLINK answers: File exists');
          tree.filters.set(handle, { family: op.slot.family, addr: op.slot.addr, minor: op.minor });
          if (!tree.bound.has(op.minor)) tree.bound.set(op.minor, new Set());
          tree.bound.get(op.minor)!.add(handle);
          break;
        }
        case 'filter-del': {
          const handle = slotHandle(op.slot);
          const filter = tree.filters.get(handle);
          if (!filter) throw new ShapingError('tc: Error: Specified filter handle not found.');
          tree.filters.delete(handle);
          tree.bound.get(filter.minor)?.delete(handle);
          break;
        }
      }
    }
  }
}

function emptyTree(): SimTree {
  return { classes: new Map(), filters: new Map(), bound: new Map() };
}

function sameLayout(a: ShapingLayout, b: ShapingLayout): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function objectCount(iface: SimIface): number {
  return DIRECTIONS.reduce((n, dir) => n + iface.trees[dir].classes.size + iface.trees[dir].filters.size, 0);
}

/** How many class and filter changes turn tree `a` into tree `b`. */
function treeDiff(a: SimTree, b: SimTree): number {
  let n = 0;
  for (const [minor, mbit] of b.classes) if (a.classes.get(minor) !== mbit) n++;
  for (const minor of a.classes.keys()) if (!b.classes.has(minor)) n++;
  for (const [handle, f] of b.filters) {
    const old = a.filters.get(handle);
    if (!old || old.addr !== f.addr || old.minor !== f.minor) n++;
  }
  for (const handle of a.filters.keys()) if (!b.filters.has(handle)) n++;
  return n;
}
