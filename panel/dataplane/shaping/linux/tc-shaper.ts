// The linux shaper: HTB + IFB through tc and ip (argv arrays through the CommandRunner), changes as one `tc -batch`.
import { randomInt } from 'node:crypto';
import type { CommandRunner } from '../../linux/runner.ts';
import { ifbName, layoutOf, type ShapingLayout } from '../../render/tc-layout.ts';
import { parseQdiscs } from '../../render/tc-parse.ts';
import { renderOps } from '../../render/tc-peer.ts';
import { planReconcile } from '../../render/tc-reconcile.ts';
import { renderView } from '../../render/tc-view.ts';
import { PeerBook } from '../peer-book.ts';
import { linkExists, readLive, readPeerViews, viewTrees } from './tc-reads.ts';
import {
  LEAF_QDISCS, SHAPING_TEXTS, ShapingError, parseChanges, parsePeers, parseTarget,
  type ShapedPeer, type Shaper, type ShapingCapabilities, type ShapingChanges, type ShapingTarget,
} from '../shaping.ts';

/**
 * Queue length of an upload IFB, in packets: what wireguard-go gives its TUN device (the download side's queue), so both
 * directions of a class buffer alike.
 */
export const IFB_QUEUE_PACKETS = 500;

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
 * Default size of one `tc -batch` run. A class create or delete costs the kernel a walk of its group's classes (at
 * most 256) and a scan of the host-wide list of filter blocks (one per HTB class): measured 15-40 ms per class with
 * 100,000 classes on the host on a busy 2-core machine, so runs of at most 500 lines stay inside the runner's 30 s
 * timeout; a change of a burst of peers is a single run.
 */
export const BATCH_LINES = 500;

interface IfaceState {
  /** The target address the layout derives from (with the cached capabilities). */
  address: string;
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
   * Probes on a throwaway IFB device (or a veth pair when IFB is missing): `tc qdisc add ... htb`, then a `u32`
   * hash-table filter, then each leaf qdisc under a class. No modprobe: what is not there is absent.
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
    if (!(await linkExists(this.runner, t.name))) throw new ShapingError(SHAPING_TEXTS.noInterface(t.name));
    this.ifaces.delete(t.name);
    await this.ensureIfb(layout.ifb);
    const live = await readLive(this.runner, layout);
    const plan = planReconcile(layout, book.peers(), live);
    if (plan.lines.length) await this.batch(plan.lines, plan.rebuilt.length > 0);
    this.ifaces.set(t.name, { address: t.address, layout, book });
  }

  async apply(target: ShapingTarget, changes: ShapingChanges): Promise<void> {
    const t = parseTarget(target);
    const c = parseChanges(changes);
    const state = this.ifaces.get(t.name);
    // The layout derives from the address and the (cached) capabilities only.
    if (!state || state.address !== t.address) throw new ShapingError(SHAPING_TEXTS.notEnsured(t.name));
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
    // The IFB device (the upload tree, built last) goes first, then the interface's trees: see planReconcile.
    const ifb = ifbName(iface);
    if (await linkExists(this.runner, ifb)) await this.runner.run('ip', ['link', 'del', 'dev', ifb]);
    if (await linkExists(this.runner, iface)) {
      const qdiscs = parseQdiscs((await this.tc(['qdisc', 'show', 'dev', iface])).stdout);
      const lines: string[] = [];
      if (qdiscs.some((q) => q.parent === 'ingress')) lines.push(`qdisc del dev ${iface} ingress`);
      if (qdiscs.some((q) => q.parent === 'root' && q.kind === 'htb')) lines.push(`qdisc del dev ${iface} root`);
      if (lines.length) await this.batch(lines, true);
    }
  }

  async show(iface: string, peerKey?: string): Promise<string> {
    const state = this.ifaces.get(iface);
    if (!state) {
      if (!(await linkExists(this.runner, iface))) throw new ShapingError(SHAPING_TEXTS.noInterface(iface));
      throw new ShapingError(SHAPING_TEXTS.notEnsured(iface));
    }
    const { layout, book } = state;
    if (peerKey === undefined) return renderView(layout, viewTrees(layout, book, await readLive(this.runner, layout, true)));
    const peer = book.get(peerKey);
    if (!peer || (peer.download === 0 && peer.upload === 0)) return '';
    return renderView(layout, await readPeerViews(this.runner, layout, book, peer), peer.minor);
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

  /**
   * The upload device `name` (an IFB), up, with {@link IFB_QUEUE_PACKETS} as its queue length: the default pfifo leaf
   * of each upload class takes its limit from it when the class is made (an IFB's own default, 32 packets, is 45 ms at
   * 8 Mbit/s and 4 ms at 100 Mbit/s: too little for one TCP flow to fill its class over a real round trip).
   */
  private async ensureIfb(name: string): Promise<void> {
    const result = await this.runner.run('ip', ['-o', 'link', 'show', 'dev', name], { allowFailure: true });
    const queue = String(IFB_QUEUE_PACKETS);
    if (result.exitCode !== 0) await this.runner.run('ip', ['link', 'add', 'name', name, 'txqueuelen', queue, 'type', 'ifb']);
    else if (/ qlen (\d+)/.exec(result.stdout)?.[1] !== queue) await this.runner.run('ip', ['link', 'set', 'dev', name, 'txqueuelen', queue]);
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
      if (made.exitCode !== 0) return { u32: false, ifb: false, leaf: null };
      cleanup = ['link', 'del', 'dev', dev];
    }
    try {
      const ok = async (args: string[]) => (await this.runner.run('tc', args, { allowFailure: true })).exitCode === 0;
      if (!(await ok(['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '0']))) {
        return { u32: false, ifb, leaf: null };
      }
      const filter = ['filter', 'add', 'dev', dev, 'parent', '1:', 'protocol', 'ip'];
      const u32 = await ok([...filter, 'prio', '1', 'handle', '1:', 'u32', 'divisor', '256']);
      await ok(['class', 'add', 'dev', dev, 'parent', '1:', 'classid', '1:1', 'htb', 'rate', '1mbit']);
      let leaf: string | null = null;
      for (const kind of this.opts.leafPreference ?? LEAF_QDISCS) {
        if (await ok(['qdisc', 'add', 'dev', dev, 'parent', '1:1', kind])) {
          leaf = kind;
          break;
        }
      }
      return { u32, ifb, leaf };
    } finally {
      await this.runner.run('ip', cleanup, { allowFailure: true });
    }
  }
}
