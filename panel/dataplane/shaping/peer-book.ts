// The shaped peers of one interface with O(1) indexes by key, class minor and IPv6 slot; validates whole batches.
import { placePeer, rootV6Slot, slotHandle, type PeerTc, type ShapingLayout } from '../render/tc-layout.ts';
import { orderOps, peerOps, type TcOp } from '../render/tc-peer.ts';
import { SHAPING_TEXTS, ShapingError, type ShapedPeer, type ShapingChanges } from './shaping.ts';

/** A validated change, not yet applied to the book. */
export interface StagedChange {
  /** The tc operations, in a safe order. */
  ops: TcOp[];
  /** Records the change in the book (call once the data plane took it). */
  commit(): void;
}

/** Peers of one interface as placed under a layout. */
export class PeerBook {
  private readonly byKey = new Map<string, PeerTc>();
  /** Owner key of each class minor, and of each root IPv6 filter handle and address (`h:`/`a:` prefixed). */
  private readonly owners = new Map<string, string>();

  constructor(readonly layout: ShapingLayout) {}

  /** A book holding exactly `peers`; throws {@link ShapingError} on a bad or conflicting peer. */
  static of(layout: ShapingLayout, peers: ShapedPeer[]): PeerBook {
    const book = new PeerBook(layout);
    book.stage({ upsert: peers, remove: [] }).commit();
    return book;
  }

  /** Every peer, in insertion order. */
  peers(): PeerTc[] {
    return [...this.byKey.values()];
  }

  get(key: string): PeerTc | undefined {
    return this.byKey.get(key);
  }

  /** The peer owning a class minor. */
  ownerOf(minor: number): PeerTc | undefined {
    const key = this.owners.get(`m:${minor}`);
    return key === undefined ? undefined : this.byKey.get(key);
  }

  /**
   * Validates `changes` against the book (every check before anything changes) and returns the tc ops: O(1) per
   * peer. A key listed twice in `upsert` is refused; a removed key that is also upserted is upserted.
   */
  stage(changes: ShapingChanges): StagedChange {
    const seen = new Set<string>();
    for (const peer of changes.upsert) {
      if (seen.has(peer.key)) throw new ShapingError(SHAPING_TEXTS.duplicateKey(peer.key));
      seen.add(peer.key);
    }
    const next = new Map<string, PeerTc | undefined>();
    for (const key of changes.remove) if (!seen.has(key) && this.byKey.has(key)) next.set(key, undefined);
    for (const peer of changes.upsert) next.set(peer.key, placePeer(this.layout, peer));
    // Claims: an entry freed by a changed peer may be taken by another peer of the same batch.
    const freed = new Set<string>();
    for (const key of next.keys()) for (const claim of claimsOf(this.byKey.get(key))) freed.add(claim.id);
    const claimed = new Map<string, string>();
    for (const [key, peer] of next) {
      for (const claim of claimsOf(peer)) {
        const owner = claimed.get(claim.id) ?? (freed.has(claim.id) ? undefined : this.owners.get(claim.id));
        if (owner !== undefined && owner !== key) throw new ShapingError(claim.conflict(key, owner));
        claimed.set(claim.id, key);
      }
    }
    const ops: TcOp[] = [];
    for (const [key, peer] of next) ops.push(...peerOps(this.byKey.get(key), peer));
    return {
      ops: orderOps(ops),
      commit: () => {
        for (const key of next.keys()) for (const claim of claimsOf(this.byKey.get(key))) this.owners.delete(claim.id);
        for (const [key, peer] of next) {
          if (peer) this.byKey.set(key, peer);
          else this.byKey.delete(key);
        }
        for (const [id, key] of claimed) this.owners.set(id, key);
      },
    };
  }
}

interface Claim {
  id: string;
  conflict(key: string, owner: string): string;
}

/** What a placed peer holds exclusively: its minor, its IPv6 address and its root-block IPv6 filter handle. */
function claimsOf(peer: PeerTc | undefined): Claim[] {
  if (!peer || (peer.download === 0 && peer.upload === 0)) return [];
  const v4 = peer.ipv4!;
  const claims: Claim[] = [{ id: `m:${peer.minor}`, conflict: (key, owner) => SHAPING_TEXTS.sameAddress(key, owner, v4) }];
  const v6 = rootV6Slot(peer);
  if (v6) {
    claims.push({ id: `a:${v6.addr}`, conflict: (key, owner) => SHAPING_TEXTS.sameAddress(key, owner, v6.addr) });
    claims.push({ id: `h:${slotHandle(v6)}`, conflict: (key, owner) => SHAPING_TEXTS.sameBucket(key, owner) });
  }
  return claims;
}
