// The linux shaper: HTB + IFB through tc and ip (argv arrays through the CommandRunner), changes as one `tc -batch`.
import { randomInt } from 'node:crypto';
import type { CommandRunner } from '../../linux/runner.ts';
import { DIRECTIONS, canonicalV6, hex, ifbName, layoutOf, type Direction, type PeerTc, type ShapingLayout } from '../../render/tc-layout.ts';
import { parseClasses, parseFilters, parseQdiscs } from '../../render/tc-parse.ts';
import { renderOps } from '../../render/tc-peer.ts';
import { isPeerFilter, planReconcile, type LiveDevice } from '../../render/tc-reconcile.ts';
import { renderView, type ViewTree } from '../../render/tc-view.ts';
import { PeerBook } from '../peer-book.ts';
import {
  LEAF_QDISCS, SHAPING_TEXTS, ShapingError, parseChanges, parsePeers, parseTarget,
  type ShapedPeer, type Shaper, type ShapingCapabilities, type ShapingChanges, type ShapingTarget,
} from '../shaping.ts';

/** Options of {@link TcShaper}. */
export interface TcShaperOptions {
  /** Runs `tc` and `ip` (optionally inside a network namespace). */
  runner: CommandRunner;
  /** Leaf qdiscs to probe, best first (default {@link LEAF_QDISCS}); tests pass e.g. `['bfifo']` to exercise the path. */
  leafPreference?: readonly string[];
  /** Most lines per `tc -batch` run (default {@link BATCH_LINES}). */
  batchLines?: number;
}

/**
 * Default size of one `tc -batch` run. Creating or deleting an HTB class makes the kernel walk every class of the
 * qdisc (reverse filter binding, `tc_bind_tclass`): about 0.6 µs per existing class here, so a class costs ~30 ms
 * at 50,000 classes and a full rebuild is quadratic. Runs of at most 500 lines stay far inside the runner's
 * timeout at that size; a change of one peer is a single run.
 */
export const BATCH_LINES = 500;

interface IfaceState {
  layout: ShapingLayout;
  book: PeerBook;
}

/**
 * {@link Shaper} on the kernel: `tc -batch -` (stdin) for every change, `tc -force -batch -` when a tree is
 * rebuilt (both split into runs of {@link BATCH_LINES}), `ip link add <ifb> type ifb` for the upload device. It
 * remembers the peers of every interface it ensured (the desired state) and plans each apply from that memory: no
 * tc read on the hot path.
 */
export class TcShaper implements Shaper {
  private readonly runner: CommandRunner;
  private readonly ifaces = new Map<string, IfaceState>();
  private caps: Promise<ShapingCapabilities> | null = null;

  constructor(private readonly opts: TcShaperOptions) {
    this.runner = opts.runner;
  }

  /**
   * Probes on a throwaway IFB device (or a veth pair when IFB is missing): `tc qdisc add ... htb`, then a `flow`
   * and a `u32` hash-table filter, then each leaf qdisc under a class. No modprobe: what is not there is absent.
   */
  capabilities(): Promise<ShapingCapabilities> {
    this.caps ??= this.probe().catch((err) => {
      this.caps = null;
      throw err;
    });
    return this.caps;
  }

  async ensure(target: ShapingTarget, peers: ShapedPeer[]): Promise<void> {
    const t = parseTarget(target);
    const list = parsePeers(peers);
    const layout = layoutOf(t, await this.capabilities());
    const book = PeerBook.of(layout, list);
    if (!(await this.linkExists(t.name))) throw new ShapingError(SHAPING_TEXTS.noInterface(t.name));
    this.ifaces.delete(t.name);
    await this.ensureIfb(layout.ifb);
    const live = await this.readLive(layout);
    const plan = planReconcile(layout, book.peers(), live);
    if (plan.lines.length) await this.batch(plan.lines, plan.rebuilt.length > 0);
    this.ifaces.set(t.name, { layout, book });
  }

  async apply(target: ShapingTarget, changes: ShapingChanges): Promise<void> {
    const t = parseTarget(target);
    const c = parseChanges(changes);
    const state = this.ifaces.get(t.name);
    if (!state || JSON.stringify(state.layout) !== JSON.stringify(layoutOf(t, await this.capabilities()))) {
      throw new ShapingError(SHAPING_TEXTS.notEnsured(t.name));
    }
    const staged = state.book.stage(c);
    const lines = renderOps(state.layout, staged.ops);
    if (lines.length) {
      try {
        await this.batch(lines, false);
      } catch (err) {
        // Part of the batch may have run: forget the interface so the next ensure re-reads the live state.
        this.ifaces.delete(t.name);
        throw err;
      }
    }
    staged.commit();
  }

  async remove(iface: string): Promise<void> {
    this.ifaces.delete(iface);
    if (await this.linkExists(iface)) {
      const qdiscs = parseQdiscs((await this.tc(['qdisc', 'show', 'dev', iface])).stdout);
      const lines: string[] = [];
      if (qdiscs.some((q) => q.parent === 'root' && q.kind === 'htb')) lines.push(`qdisc del dev ${iface} root`);
      if (qdiscs.some((q) => q.parent === 'ingress')) lines.push(`qdisc del dev ${iface} ingress`);
      if (lines.length) await this.batch(lines, true);
    }
    const ifb = ifbName(iface);
    if (await this.linkExists(ifb)) await this.runner.run('ip', ['link', 'del', 'dev', ifb]);
  }

  async show(iface: string, peerKey?: string): Promise<string> {
    const state = this.ifaces.get(iface);
    if (!state) {
      if (!(await this.linkExists(iface))) throw new ShapingError(SHAPING_TEXTS.noInterface(iface));
      throw new ShapingError(SHAPING_TEXTS.notEnsured(iface));
    }
    const { layout, book } = state;
    let only: number | undefined;
    if (peerKey !== undefined) {
      const peer = book.get(peerKey);
      if (!peer || (peer.download === 0 && peer.upload === 0)) return '';
      only = peer.minor;
    }
    const live = await this.readLive(layout, true);
    const trees: ViewTree[] = DIRECTIONS.map((dir) => viewTree(layout, book, dir, live[dir]));
    return renderView(layout, trees, only);
  }

  /**
   * Runs lines through `tc [-force] -batch -` in runs of at most `batchLines`; the first failing run throws a
   * {@link ShapingError} naming tc's complaint (later runs do not start).
   */
  private async batch(lines: string[], force: boolean): Promise<void> {
    const size = this.opts.batchLines ?? BATCH_LINES;
    for (let i = 0; i < lines.length; i += size) await this.batchRun(lines.slice(i, i + size), force);
  }

  private async batchRun(lines: string[], force: boolean): Promise<void> {
    const args = force ? ['-force', '-batch', '-'] : ['-batch', '-'];
    const result = await this.runner.run('tc', args, { input: `${lines.join('\n')}\n`, allowFailure: true });
    if (result.exitCode !== 0) {
      const complaint = result.stderr.split('\n').map((l) => l.trim()).filter((l) => l && !/^Command failed /.test(l) && !/^We have an error talking/.test(l));
      throw new ShapingError(`tc: ${complaint[complaint.length - 1] ?? `exit code ${result.exitCode}`}`, result.stderr);
    }
  }

  private async tc(args: string[]): Promise<{ stdout: string }> {
    return this.runner.run('tc', args);
  }

  private async readLive(layout: ShapingLayout, stats = false): Promise<Record<Direction, LiveDevice>> {
    const s = stats ? ['-s'] : [];
    const read = async (dev: string, ingress: boolean): Promise<LiveDevice> => {
      if (!(await this.linkExists(dev))) return { qdiscs: [], classes: [], filters: [], ingressFilters: [] };
      const [q, c, f, i] = await Promise.all([
        this.tc([...s, 'qdisc', 'show', 'dev', dev]),
        this.tc([...s, 'class', 'show', 'dev', dev]),
        this.tc(['filter', 'show', 'dev', dev]),
        ingress ? this.tc(['filter', 'show', 'dev', dev, 'ingress']) : Promise.resolve({ stdout: '' }),
      ]);
      return { qdiscs: parseQdiscs(q.stdout), classes: parseClasses(c.stdout), filters: parseFilters(f.stdout), ingressFilters: parseFilters(i.stdout) };
    };
    const [download, upload] = await Promise.all([read(layout.iface, true), read(layout.ifb, false)]);
    return { download, upload };
  }

  private async linkExists(name: string): Promise<boolean> {
    const result = await this.runner.run('ip', ['-o', 'link', 'show', 'dev', name], { allowFailure: true });
    return result.exitCode === 0;
  }

  private async ensureIfb(name: string): Promise<void> {
    const result = await this.runner.run('ip', ['-o', 'link', 'show', 'dev', name], { allowFailure: true });
    if (result.exitCode !== 0) await this.runner.run('ip', ['link', 'add', 'name', name, 'type', 'ifb']);
    if (result.exitCode !== 0 || !/[<,]UP[,>]/.test(result.stdout)) await this.runner.run('ip', ['link', 'set', 'dev', name, 'up']);
  }

  private async probe(): Promise<ShapingCapabilities> {
    const id = randomInt(100000, 1000000);
    const dev = `vhprobe${id}`;
    let ifb = true;
    let cleanup = ['link', 'del', 'dev', dev];
    if ((await this.runner.run('ip', ['link', 'add', 'name', dev, 'type', 'ifb'], { allowFailure: true })).exitCode !== 0) {
      ifb = false;
      const made = await this.runner.run('ip', ['link', 'add', 'name', dev, 'type', 'veth', 'peer', 'name', `vhpeer${id}`], { allowFailure: true });
      if (made.exitCode !== 0) return { flow: false, u32: false, ifb: false, leaf: null };
      cleanup = ['link', 'del', 'dev', dev];
    }
    try {
      const ok = async (args: string[]) => (await this.runner.run('tc', args, { allowFailure: true })).exitCode === 0;
      if (!(await ok(['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '0']))) {
        return { flow: false, u32: false, ifb, leaf: null };
      }
      const filter = ['filter', 'add', 'dev', dev, 'parent', '1:', 'protocol', 'ip'];
      const flow = await ok([...filter, 'prio', '1', 'handle', '1', 'flow', 'map', 'key', 'dst', 'and', '0xff', 'addend', '0xffffffff', 'baseclass', '1:1']);
      const u32 = await ok([...filter, 'prio', '2', 'handle', '1:', 'u32', 'divisor', '256']);
      await ok(['class', 'add', 'dev', dev, 'parent', '1:', 'classid', '1:1', 'htb', 'rate', '1mbit']);
      let leaf: string | null = null;
      for (const kind of this.opts.leafPreference ?? LEAF_QDISCS) {
        if (await ok(['qdisc', 'add', 'dev', dev, 'parent', '1:1', kind])) {
          leaf = kind;
          break;
        }
      }
      return { flow, u32, ifb, leaf };
    } finally {
      await this.runner.run('ip', cleanup, { allowFailure: true });
    }
  }
}

/** The view of one tree from live tc state and the book (which names the peer of each minor). */
function viewTree(layout: ShapingLayout, book: PeerBook, dir: Direction, live: LiveDevice): ViewTree {
  const root = live.qdiscs.find((q) => q.parent === 'root' && q.kind === 'htb' && q.handle === '1:');
  const leafKind = new Map(live.qdiscs.map((q) => [q.parent, q.kind]));
  const filters = new Map<string, Array<{ handle: string; family: 4 | 6; addr: string }>>();
  for (const f of live.filters) {
    if (!isPeerFilter(f) || !f.flowid) continue;
    const family = f.protocol === 'ip' ? 4 : 6;
    const list = filters.get(f.flowid) ?? [];
    list.push({ handle: `${hex(f.fh!.ht)}:${f.fh!.bucket ? hex(f.fh!.bucket) : ''}:${hex(f.fh!.node)}`, family, addr: addrOf(family, f.matches) });
    filters.set(f.flowid, list);
  }
  return {
    dir,
    root: root ? root.stats : null,
    classes: live.classes.map((c) => {
      const peer: PeerTc | undefined = book.ownerOf(c.minor);
      const own = peer && peer[dir] > 0 ? peer : undefined;
      return {
        minor: c.minor,
        rateBit: c.rateBit,
        ceilBit: c.ceilBit,
        leaf: c.leaf ? (leafKind.get(`1:${hex(c.minor)}`) ?? null) : null,
        stats: c.stats,
        peer: own ? { key: own.key, ipv4: own.v4?.addr ?? null, ipv6: own.v6?.addr ?? null } : null,
        filters: filters.get(`1:${hex(c.minor)}`) ?? [],
      };
    }),
  };
}

/** The address of a peer filter from its match words. */
function addrOf(family: 4 | 6, matches: string[]): string {
  const words = matches.map((m) => parseInt(m.split('/')[0], 16));
  if (family === 4) return [24, 16, 8, 0].map((s) => String((words[0] >>> s) & 0xff)).join('.');
  const groups = words.flatMap((w) => [(w >>> 16) & 0xffff, w & 0xffff]);
  return canonicalV6(groups.map((g) => g.toString(16)).join(':'));
}
