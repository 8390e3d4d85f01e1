// The in-memory twin of the tc shaper: same layout, same checks and texts, same view format (counters stay 0).
import { DIRECTIONS, ROOT_MAJOR, classId, layoutOf, slotHandle, type Direction, type ShapingLayout, type U32Slot } from '../../render/tc-layout.ts';
import type { TcStats } from '../../render/tc-parse.ts';
import type { TcOp } from '../../render/tc-peer.ts';
import { renderView, type ViewClass, type ViewFilter, type ViewTree } from '../../render/tc-view.ts';
import { PeerBook } from '../peer-book.ts';
import {
  SHAPING_TEXTS, ShapingError, parseChanges, parsePeers, parseTarget,
  type ShapedPeer, type Shaper, type ShapingCapabilities, type ShapingChanges, type ShapingTarget,
} from '../shaping.ts';

/** Options of {@link SimulatedShaper}. */
export interface SimulatedShaperOptions {
  /** What the simulated kernel offers (default: u32 and ifb, no fair leaf — this sandbox's kernel). */
  capabilities?: ShapingCapabilities;
  /** Whether a WireGuard interface exists (default: every name does); e.g. the simulated driver's list. */
  interfaceExists?(name: string): boolean | Promise<boolean>;
  /** The simulated kernel state; share one between two shapers to simulate a panel restart. */
  kernel?: SimulatedTc;
}

/**
 * One direction's tree as the kernel holds it under the layout's scaffold (the root HTB, one class and child HTB per
 * /24 group, the u32 tables): the peer classes of the child HTBs and the peer nodes of every filter block.
 */
interface SimTree {
  /** Peer classes by class id (`<group major>:<minor>`) → Mbit/s. */
  classes: Map<string, number>;
  /** Peer nodes by `<block major>/<handle>`. */
  filters: Map<string, { family: 4 | 6; addr: string; block: number; handle: string; flowid: string }>;
  /** Filter keys pointing at each class id (the kernel's per-class filter count). */
  bound: Map<string, Set<string>>;
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
  /** The target address each book's layout derives from. */
  private readonly addresses = new Map<string, string>();
  private readonly kernel: SimulatedTc;
  private readonly caps: ShapingCapabilities;
  private counters = { ensureCalls: 0, applyCalls: 0, rebuilds: 0, objectChanges: 0 };

  constructor(private readonly opts: SimulatedShaperOptions = {}) {
    this.caps = opts.capabilities ?? { u32: true, ifb: true, leaf: null };
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
    this.addresses.set(t.name, t.address);
  }

  async apply(target: ShapingTarget, changes: ShapingChanges): Promise<void> {
    const t = parseTarget(target);
    const c = parseChanges(changes);
    const book = this.books.get(t.name);
    const iface = this.kernel.ifaces.get(t.name);
    // The layout derives from the address and the capabilities (fixed for this shaper) only.
    if (!book || !iface || this.addresses.get(t.name) !== t.address) throw new ShapingError(SHAPING_TEXTS.notEnsured(t.name));
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
    const trees: ViewTree[] = DIRECTIONS.map((dir) => {
      const tree = kernel.trees[dir];
      const byClass = new Map<string, ViewFilter[]>();
      const byAddress = new Map<string, ViewFilter[]>();
      for (const f of tree.filters.values()) {
        const view: ViewFilter = { block: f.block, handle: f.handle, family: f.family, addr: f.addr, flowid: f.flowid };
        const [map, key] = f.block === ROOT_MAJOR ? [byAddress, f.addr] : [byClass, f.flowid];
        map.set(key, [...(map.get(key) ?? []), view]);
      }
      return {
        dir,
        root: ZERO,
        classes: [...tree.classes].map(([id, mbit]): ViewClass => {
          const [major, minor] = id.split(':').map((x) => parseInt(x, 16));
          const owner = book.ownerOf(minor);
          const peer = owner && owner[dir] > 0 && owner.group?.major === major ? owner : undefined;
          return {
            major,
            minor,
            rateBit: mbit * 1e6,
            ceilBit: mbit * 1e6,
            leaf: kernel.layout.leaf,
            stats: ZERO,
            peer: peer ? { key: peer.key, ipv4: peer.ipv4, ipv6: peer.ipv6 } : null,
            filters: [...(byClass.get(id) ?? []), ...(peer?.ipv6 ? (byAddress.get(peer.ipv6) ?? []) : [])],
          };
        }),
      };
    });
    if (peerKey === undefined) return renderView(kernel.layout, trees);
    const peer = book.get(peerKey);
    return peer && (peer.download > 0 || peer.upload > 0) ? renderView(kernel.layout, trees, peer.minor) : '';
  }

  /** Test hook: calls made and tc objects changed so far. */
  stats(): { ensureCalls: number; applyCalls: number; rebuilds: number; objectChanges: number } {
    return { ...this.counters };
  }

  private async requireInterface(name: string): Promise<void> {
    const exists = this.opts.interfaceExists ? await this.opts.interfaceExists(name) : true;
    if (!exists) throw new ShapingError(SHAPING_TEXTS.noInterface(name));
  }

  /** Applies ops with the kernel's invariants: a class with filters cannot go, a filter handle is unique in its block. */
  private run(iface: SimIface, ops: TcOp[], count: boolean): void {
    for (const op of ops) {
      const tree = iface.trees[op.dir];
      if (count) this.counters.objectChanges++;
      switch (op.op) {
        case 'class-set':
          tree.classes.set(classId(op.major, op.minor), op.mbit);
          break;
        case 'class-del': {
          const id = classId(op.major, op.minor);
          if (tree.bound.get(id)?.size) throw new ShapingError('tc: Error: HTB class in use');
          tree.classes.delete(id);
          break;
        }
        case 'filter-add': {
          const key = filterKey(op.slot);
          if (tree.filters.has(key)) throw new ShapingError('tc: RTNETLINK answers: File exists');
          const flowid = classId(op.slot.flow.major, op.slot.flow.minor);
          tree.filters.set(key, { family: op.slot.family, addr: op.slot.addr, block: op.slot.block, handle: slotHandle(op.slot), flowid });
          if (!tree.bound.has(flowid)) tree.bound.set(flowid, new Set());
          tree.bound.get(flowid)!.add(key);
          break;
        }
        case 'filter-del': {
          const key = filterKey(op.slot);
          const filter = tree.filters.get(key);
          if (!filter) throw new ShapingError('tc: Error: Specified filter handle not found.');
          tree.filters.delete(key);
          tree.bound.get(filter.flowid)?.delete(key);
          break;
        }
      }
    }
  }
}

/** A filter's identity in the kernel: its block and its handle. */
function filterKey(slot: U32Slot): string {
  return `${slot.block}/${slotHandle(slot)}`;
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
  for (const [id, mbit] of b.classes) if (a.classes.get(id) !== mbit) n++;
  for (const id of a.classes.keys()) if (!b.classes.has(id)) n++;
  for (const [key, f] of b.filters) {
    const old = a.filters.get(key);
    if (!old || old.addr !== f.addr || old.flowid !== f.flowid) n++;
  }
  for (const handle of a.filters.keys()) if (!b.filters.has(handle)) n++;
  return n;
}
