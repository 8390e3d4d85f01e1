// Reads of the live tc state of a shaped interface (whole trees, or one peer's group) and their views.
import type { CommandRunner } from '../../linux/runner.ts';
import {
  DIRECTIONS, ROOT_MAJOR, canonicalV6, classId, hex, rootV6Slot, slotHandle, type Direction, type PeerTc, type ShapingLayout,
} from '../../render/tc-layout.ts';
import { parseClasses, parseFilters, parseGroupFilters, parseQdiscs, type TcFilter } from '../../render/tc-parse.ts';
import { deviceOf } from '../../render/tc-peer.ts';
import { emptyDevice, isPeerFilter, type LiveDevice } from '../../render/tc-reconcile.ts';
import type { ViewFilter, ViewTree } from '../../render/tc-view.ts';
import type { PeerBook } from '../peer-book.ts';

/** Whether a link exists (`ip -o link show dev NAME`). */
export async function linkExists(runner: CommandRunner, name: string): Promise<boolean> {
  return (await runner.run('ip', ['-o', 'link', 'show', 'dev', name], { allowFailure: true })).exitCode === 0;
}

/**
 * Both trees of an interface: `tc [-s] qdisc|class show` of each device, `tc filter show` of its root block, and one
 * `tc -batch` reading every group's block (`class show classid 1:<M>` + `filter show parent <M>:` per group); the
 * ingress filters of the WireGuard interface. Linear in the tree; a missing device reads as empty.
 */
export async function readLive(runner: CommandRunner, layout: ShapingLayout, stats = false): Promise<Record<Direction, LiveDevice>> {
  const [download, upload] = await Promise.all([readDevice(runner, layout.iface, true, stats), readDevice(runner, layout.ifb, false, stats)]);
  return { download, upload };
}

async function readDevice(runner: CommandRunner, dev: string, ingress: boolean, stats: boolean): Promise<LiveDevice> {
  if (!(await linkExists(runner, dev))) return emptyDevice();
  const s = stats ? ['-s'] : [];
  const tc = (args: string[]) => runner.run('tc', args).then((r) => r.stdout);
  const [q, c, f, i] = await Promise.all([
    tc([...s, 'qdisc', 'show', 'dev', dev]),
    tc([...s, 'class', 'show', 'dev', dev]),
    tc(['filter', 'show', 'dev', dev]),
    ingress ? tc(['filter', 'show', 'dev', dev, 'ingress']) : Promise.resolve(''),
  ]);
  const classes = parseClasses(c);
  const filters = new Map<number, TcFilter[]>([[ROOT_MAJOR, parseFilters(f)]]);
  const groups = classes.filter((x) => x.major === hex(ROOT_MAJOR) && x.leaf).map((x) => x.minor);
  if (groups.length) {
    const input = groups.map((m) => `class show dev ${dev} classid ${classId(ROOT_MAJOR, m)}\nfilter show dev ${dev} parent ${hex(m)}:\n`).join('');
    const out = await runner.run('tc', ['-force', '-batch', '-'], { input, allowFailure: true });
    for (const [major, list] of parseGroupFilters(out.stdout)) filters.set(major, list);
  }
  return { qdiscs: parseQdiscs(q), classes, filters, ingressFilters: parseFilters(i) };
}

/** The views of both trees from a whole read. */
export function viewTrees(layout: ShapingLayout, book: PeerBook, live: Record<Direction, LiveDevice>): ViewTree[] {
  return DIRECTIONS.map((dir) => viewTree(book, dir, live[dir]));
}

/**
 * The views of one peer's classes, reading only its group: the root qdisc's counters, `class show parent <M>:`,
 * the group block's filters and the peer's root-block IPv6 node (`filter get`), per direction it is limited in.
 */
export async function readPeerViews(runner: CommandRunner, layout: ShapingLayout, book: PeerBook, peer: PeerTc): Promise<ViewTree[]> {
  const major = peer.group!.major;
  const id = classId(major, peer.minor);
  const v6 = rootV6Slot(peer);
  return Promise.all(
    DIRECTIONS.filter((dir) => peer[dir] > 0).map(async (dir): Promise<ViewTree> => {
      const dev = deviceOf(layout, dir);
      if (!(await linkExists(runner, dev))) return { dir, root: null, classes: [] };
      const tc = (args: string[]) => runner.run('tc', args, { allowFailure: true }).then((r) => r.stdout);
      const [q, c, f, r] = await Promise.all([
        tc(['-s', 'qdisc', 'show', 'dev', dev, 'root']),
        tc(['-s', 'class', 'show', 'dev', dev, 'parent', `${hex(major)}:`]),
        tc(['filter', 'show', 'dev', dev, 'parent', `${hex(major)}:`]),
        v6 ? tc(['filter', 'get', 'dev', dev, 'parent', `${hex(ROOT_MAJOR)}:`, 'protocol', 'ipv6', 'prio', '2', 'handle', slotHandle(v6), 'u32']) : Promise.resolve(''),
      ]);
      const classes = parseClasses(c).filter((x) => classId(parseInt(x.major, 16), x.minor) === id);
      const leaf = classes[0]?.leaf ? await tc(['qdisc', 'show', 'dev', dev, 'parent', id]) : '';
      const live: LiveDevice = {
        qdiscs: [...parseQdiscs(q), ...parseQdiscs(leaf)],
        classes,
        filters: new Map([[major, parseFilters(f)], [ROOT_MAJOR, parseFilters(r)]]),
        ingressFilters: [],
      };
      return viewTree(book, dir, live);
    }),
  );
}

/** The view of one tree from live tc state and the book (which names the peer of each minor). */
function viewTree(book: PeerBook, dir: Direction, live: LiveDevice): ViewTree {
  const root = live.qdiscs.find((q) => q.parent === 'root' && q.kind === 'htb' && q.handle === `${hex(ROOT_MAJOR)}:`);
  const leafKind = new Map(live.qdiscs.map((q) => [q.parent, q.kind]));
  // Group-block nodes by the class they send to; root-block IPv6 nodes (to the group class) by address.
  const byClass = new Map<string, ViewFilter[]>();
  const byAddress = new Map<string, ViewFilter[]>();
  for (const [block, filters] of live.filters) {
    for (const f of filters) {
      if (!isPeerFilter(f, block) || !f.flowid) continue;
      const family = f.protocol === 'ip' ? 4 : 6;
      const view: ViewFilter = { block, handle: `${hex(f.fh!.ht)}:${f.fh!.bucket ? hex(f.fh!.bucket) : ''}:${hex(f.fh!.node)}`, family, addr: addrOf(family, f.matches), flowid: f.flowid };
      const [map, key] = block === ROOT_MAJOR ? [byAddress, view.addr] : [byClass, f.flowid];
      map.set(key, [...(map.get(key) ?? []), view]);
    }
  }
  return {
    dir,
    root: root ? root.stats : null,
    classes: live.classes.filter((c) => c.major !== hex(ROOT_MAJOR)).map((c) => {
      const major = parseInt(c.major, 16);
      const id = classId(major, c.minor);
      const owner = book.ownerOf(c.minor);
      const peer = owner && owner[dir] > 0 && owner.group?.major === major ? owner : undefined;
      return {
        major,
        minor: c.minor,
        rateBit: c.rateBit,
        ceilBit: c.ceilBit,
        leaf: c.leaf ? (leafKind.get(id) ?? null) : null,
        stats: c.stats,
        peer: peer ? { key: peer.key, ipv4: peer.ipv4, ipv6: peer.ipv6 } : null,
        filters: [...(byClass.get(id) ?? []), ...(peer?.ipv6 ? (byAddress.get(peer.ipv6) ?? []) : [])],
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
