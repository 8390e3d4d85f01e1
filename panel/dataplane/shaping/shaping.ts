// The shaping subsystem's seam: per-peer bandwidth limits on a WireGuard interface (HTB + IFB), linux and simulated.
import { z } from 'zod';

/**
 * The largest rate in Mbit/s a peer may get (the spec's `b_download`/`b_upload` range is 0-10000). The unit is
 * megabit per second (10^6 bit/s, tc's `mbit`); `0` means unlimited, which installs no class at all.
 */
const MAX_MBIT = 10_000;

/** One peer as the store wants it shaped. */
export interface ShapedPeer {
  /** The peer's WireGuard public key (base64): the identity `apply` and `show` use. */
  key: string;
  /** The peer's IPv4 address (bare or `/32`); its host offset in the server subnet is its HTB class minor. */
  ipv4: string | null;
  /** The peer's IPv6 address (bare or `/128`), or null. Shaped in the same class as its IPv4 address. */
  ipv6: string | null;
  /** Traffic to the peer (the interface's egress) in Mbit/s; 0 = unlimited (no class). */
  downloadMbit: number;
  /** Traffic from the peer (the interface's ingress, redirected to an IFB device) in Mbit/s; 0 = unlimited. */
  uploadMbit: number;
}

/** The interface a shaper works on. */
export interface ShapingTarget {
  /** The WireGuard interface, e.g. `wg123`. */
  name: string;
  /** The server's IPv4 address with its prefix, e.g. `10.0.1.1/24`: the subnet whose host offsets are class minors. */
  address: string;
}

/** A batch of peer changes on one interface. */
export interface ShapingChanges {
  /** Peers to shape or re-shape (matched by key); a peer with both rates 0 loses its classes and filters. */
  upsert: ShapedPeer[];
  /** Keys of peers to unshape (unknown keys are ignored). */
  remove: string[];
}

/** Fair leaf qdiscs the shaper puts under each peer class, best first, when the kernel has them. */
export const LEAF_QDISCS = ['fq_codel', 'sfq'] as const;
/** A leaf qdisc kind; null means HTB's default leaf (a pfifo). */
export type LeafQdisc = string;

/** What the kernel (of the namespace the shaper runs in) offers. */
export interface ShapingCapabilities {
  /** `cls_u32` with hash tables (the only classifier the layout uses). */
  u32: boolean;
  /** IFB devices (upload shaping needs one per interface). */
  ifb: boolean;
  /** The fair leaf qdisc in use (first of {@link LEAF_QDISCS} present), or null for HTB's default pfifo. */
  leaf: LeafQdisc | null;
}

/**
 * Per-peer bandwidth shaping of WireGuard interfaces.
 *
 * Layout on an interface `wgN` with subnet `S` (the same tree per direction):
 * - download: an HTB root `1:` (`default 0`: unclassified traffic passes unlimited) on the interface's egress;
 * - upload: an `ingress` qdisc on the interface whose one filter redirects every packet (`mirred egress redirect`)
 *   to the IFB device `ifb-wgN`, which carries the same tree keyed by source address;
 * - one group per /24 of `S` (at most 256, the /16 window): a class `1:<M>` of the root (100 Gbit/s, never the
 *   limit) whose leaf is a child HTB `<M>:` (`default 0`); the root's u32 filters send a packet to its /24's group;
 * - a shaped peer gets one HTB class `<M>:<minor>` per limited direction in its group's child HTB (rate = ceil = its
 *   limit, under the best fair leaf qdisc the kernel has, else HTB's default pfifo), selected by a u32 node in the
 *   group's filter block (IPv6: a node in the root block picks the group, one in the group block the class); a peer
 *   without a limit gets nothing.
 *
 * Why groups: creating or deleting an HTB class makes the kernel walk every class of that qdisc (reverse filter
 * binding), so with one flat qdisc a class costs O(peers); in a group's child HTB it walks at most 256 classes.
 * What remains O(tc objects of the host) is the kernel's own: each HTB class carries a filter block, and binding or
 * unbinding one scans a host-wide list of every block (`flow_indr_dev_setup_offload`, devices without tc offload),
 * tens of nanoseconds per existing block; a rate change creates nothing and is O(1).
 *
 * Handles are derived, never allocated: the class minor is the peer's IPv4 host offset in `S` (`10.0.1.7` in
 * `10.0.1.0/24` is minor 7 of the first group), the group is its /24 (major from `GROUP_MAJORS` in render/tc-layout.ts), and the u32 node
 * handles come from the address octets. The store's addresses are the desired state, so a reconcile after a restart
 * derives the same handles and finds the live objects. HTB class minors are 16 bits: hosts 1-65,534 of the subnet
 * can be shaped (every host of a /16 or narrower subnet); a peer beyond host 65,534 of a wider subnet is refused with
 * a {@link ShapingError}, nothing is changed.
 *
 * Every method validates its input and throws {@link ShapingError} with the texts of {@link SHAPING_TEXTS}.
 */
export interface Shaper {
  /** Probes the kernel once (cached): classifiers, IFB and the fair leaf qdisc. */
  capabilities(): Promise<ShapingCapabilities>;
  /**
   * Full reconcile of one interface to exactly `peers`: reads the live tc state, rebuilds the root setup only when
   * it differs (`tc -force -batch`), otherwise adds, changes and deletes only the classes and filters that differ.
   * Must run (once per process, e.g. on boot and reload) before {@link apply} on that interface, and again whenever
   * the interface was (re)created, since its qdiscs go with the link. A tree of another layout (the flat one of
   * earlier releases) is rebuilt. Cost: reads are linear, a right state costs reads only; a rebuild creates every
   * class, each at the kernel's per-block cost (see the layout above).
   */
  ensure(target: ShapingTarget, peers: ShapedPeer[]): Promise<void>;
  /**
   * Incremental change: O(1) tc batch lines per peer (8 for a new peer with IPv4 and IPv6 in both directions, 1 for a
   * rate change), in one `tc -batch` for the whole batch. Every check runs before anything is written. When tc fails midway the shaper
   * forgets the interface: later applies throw `notEnsured` until an {@link ensure} re-reads the live state.
   */
  apply(target: ShapingTarget, changes: ShapingChanges): Promise<void>;
  /**
   * Removes the interface's root and ingress qdiscs (with every class and filter) and its IFB device; a no-op when
   * none. Call it when a server is deleted: the IFB device outlives its WireGuard link otherwise.
   */
  remove(iface: string): Promise<void>;
  /**
   * The live state as text, with counters: the interface's two HTB trees, or only the classes and filters of the
   * peer with that key (an empty view when the peer has no class).
   */
  show(iface: string, peerKey?: string): Promise<string>;
}

/** A refused shaping request or a failed tc run; `message` is one of {@link SHAPING_TEXTS} or `tc: <stderr>`. */
export class ShapingError extends Error {
  constructor(message: string, readonly detail?: string) {
    super(message);
    this.name = 'ShapingError';
  }
}

/** Every text a shaper throws (both implementations). */
export const SHAPING_TEXTS = {
  noInterface: (name: string) => `shaping: interface ${name} does not exist`,
  notEnsured: (name: string) => `shaping: interface ${name} is not set up for shaping (ensure it first)`,
  badTarget: (detail: string) => `shaping: invalid target: ${detail}`,
  badPeer: (detail: string) => `shaping: invalid peer: ${detail}`,
  noIpv4: (key: string) => `shaping: peer ${key} has a limit but no IPv4 address (its class minor derives from it)`,
  outsideSubnet: (key: string, ip: string, subnet: string) => `shaping: peer ${key} address ${ip} is not a host of ${subnet}`,
  minorRange: (key: string, ip: string, host: number) =>
    `shaping: peer ${key} address ${ip} is host ${host} of its subnet; HTB class minors are 16 bits, so only hosts 1-65534 can be shaped`,
  sameAddress: (key: string, other: string, ip: string) => `shaping: peers ${key} and ${other} share address ${ip}`,
  sameBucket: (key: string, other: string) =>
    `shaping: peers ${key} and ${other} collide in the IPv6 filter table (same last 16 address bits and node)`,
  duplicateKey: (key: string) => `shaping: peer ${key} is listed twice`,
  noClassifier: 'shaping: the kernel has no u32 classifier',
  noIfb: 'shaping: the kernel has no ifb devices (upload shaping needs one)',
} as const;

const address = z.string().min(1).max(64);

/** Input schema of a {@link ShapedPeer} (zod at the seam). */
const shapedPeerSchema = z.object({
  key: z.string().min(1).max(128),
  ipv4: address.nullable(),
  ipv6: address.nullable(),
  downloadMbit: z.number().int().min(0).max(MAX_MBIT),
  uploadMbit: z.number().int().min(0).max(MAX_MBIT),
});

/** Input schema of a {@link ShapingTarget}. */
const shapingTargetSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/),
  address: z.string().min(9).max(18),
});

/** Parses a target or throws {@link ShapingError}. */
export function parseTarget(target: unknown): ShapingTarget {
  const result = shapingTargetSchema.safeParse(target);
  if (!result.success) throw new ShapingError(SHAPING_TEXTS.badTarget(issueText(result.error)));
  return result.data;
}

const peersSchema = z.array(shapedPeerSchema);
const changesSchema = z.object({ upsert: peersSchema, remove: z.array(z.string().min(1).max(128)) });

/** Parses peers or throws {@link ShapingError}. */
export function parsePeers(peers: unknown): ShapedPeer[] {
  const result = peersSchema.safeParse(peers);
  if (!result.success) throw new ShapingError(SHAPING_TEXTS.badPeer(issueText(result.error)));
  return result.data;
}

/** Parses a change batch or throws {@link ShapingError}. */
export function parseChanges(changes: unknown): ShapingChanges {
  const result = changesSchema.safeParse(changes);
  if (!result.success) throw new ShapingError(SHAPING_TEXTS.badPeer(issueText(result.error)));
  return result.data;
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.join('.') || 'value'}: ${issue.message}` : 'invalid';
}
