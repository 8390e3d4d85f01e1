// A batch of account changes → per server, one net change per account and one merged change (and its inverse) per subsystem.
import type { PeerChanges } from '../dataplane/wireguard/driver.ts';
import type { FirewallPeerChanges } from '../dataplane/firewall/firewall.ts';
import type { ShapingChanges } from '../dataplane/shaping/shaping.ts';
import type { AccountRow } from '../store/repositories/accounts.ts';
import type { ServerRow } from '../store/repositories/servers.ts';
import {
  desiredPeer, firewallChanges, firewallPeer, parkedPeer, peerChanges, shapedPeer, shapingChanges, wireguardPeer, type DesiredPeer,
} from './dataplane-specs.ts';

/** One account's change as the store made it (null = absent; only enabled rows have a peer). */
export interface AccountChange {
  server: ServerRow;
  before: AccountRow | null;
  after: AccountRow | null;
}

/** What one server's data plane gets for a batch. */
export interface ServerBatch {
  server: ServerRow;
  /** One net change per account (its first `before`, its last `after`), in store order (what followers hear). */
  changes: AccountChange[];
  /** The merged WireGuard, firewall and shaping changes and their inverses (null: that subsystem has nothing to do). */
  wg: PeerChanges | null;
  wgUndo: PeerChanges;
  fw: FirewallPeerChanges | null;
  fwUndo: FirewallPeerChanges;
  tc: ShapingChanges | null;
  tcUndo: ShapingChanges;
  /**
   * Keys of deleted accounts' peers, removed by a `wg set` of their own once the firewall and shaping steps succeeded
   * (not in `wg`); a deleted suspended account's key is here too, as its peer may still be parked.
   */
  wgLeaving: string[];
  /** Peers coming back (enabled): their kept endpoint is put back with a keepalive. */
  resumed: Array<{ accountId: number; peer: DesiredPeer }>;
  /** Peers that appeared or moved to another IPv4 address (their stored port forwards go back in). */
  readdressed: DesiredPeer[];
}

/**
 * Plans a batch: changes of the same account collapse into one net change (a row created and deleted in the same
 * batch leaves nothing), then per server the per-account changes of each subsystem merge into one (removals that a
 * later upsert of the same key or mark supersedes are dropped), each with its inverse for the undo. O(batch).
 */
export function planAccountBatch(changes: AccountChange[]): ServerBatch[] {
  const net = new Map<number, AccountChange>();
  for (const c of changes) {
    const id = (c.before ?? c.after)!.id;
    const seen = net.get(id);
    net.set(id, seen ? { server: c.server, before: seen.before, after: c.after } : c);
  }
  const byServer = new Map<string, AccountChange[]>();
  for (const c of net.values()) {
    if (!c.before && !c.after) continue;
    const list = byServer.get(c.server.interface_name) ?? [];
    list.push(c);
    byServer.set(c.server.interface_name, list);
  }
  return [...byServer.values()].map((list) => planServer(list));
}

function planServer(changes: AccountChange[]): ServerBatch {
  const wg: Array<PeerChanges | null> = [];
  const wgUndo: Array<PeerChanges | null> = [];
  const fw: Array<FirewallPeerChanges | null> = [];
  const fwUndo: Array<FirewallPeerChanges | null> = [];
  const tc: Array<ShapingChanges | null> = [];
  const tcUndo: Array<ShapingChanges | null> = [];
  const batch: ServerBatch = {
    server: changes[changes.length - 1].server, changes: [], wg: null, wgUndo: { upsert: [], remove: [] }, fw: null,
    fwUndo: { upsert: [], remove: [] }, tc: null, tcUndo: { upsert: [], remove: [] }, wgLeaving: [], resumed: [], readdressed: [],
  };
  for (const c of changes) {
    const b = c.before && c.before.status === 'enable' ? desiredPeer(c.before) : null;
    const a = c.after && c.after.status === 'enable' ? desiredPeer(c.after) : null;
    const deleted = c.before !== null && c.after === null;
    // A suspend parks the peer (no allowed IPs; counters and endpoint stay until the next traffic sample removes it).
    const w = b && !a && c.after ? { upsert: [parkedPeer(wireguardPeer(b))], remove: [] }
      : deleted ? null
      : peerChanges(b && wireguardPeer(b), a && wireguardPeer(a));
    if (deleted) batch.wgLeaving.push(c.before!.public_key);
    const f = firewallChanges(b && firewallPeer(b), a && firewallPeer(a));
    const t = shapingChanges(b && shapedPeer(b), a && shapedPeer(a));
    batch.changes.push(c);
    wg.push(w);
    wgUndo.push(w && peerChanges(a && wireguardPeer(a), b && wireguardPeer(b)));
    fw.push(f);
    fwUndo.push(f && firewallChanges(a && firewallPeer(a), b && firewallPeer(b)));
    tc.push(t);
    tcUndo.push(t && shapingChanges(a && shapedPeer(a), b && shapedPeer(b)));
    if (w && a && !b && c.after) batch.resumed.push({ accountId: c.after.id, peer: a });
    if (f && a && (!b || b.ipv4 !== a.ipv4)) batch.readdressed.push(a);
  }
  batch.wg = merge(wg, (p) => p.publicKey);
  // A key a deleted account leaves and another account of the batch takes stays (its upsert is in `wg`).
  const taken = new Set(batch.wg?.upsert.map((p) => p.publicKey) ?? []);
  batch.wgLeaving = batch.wgLeaving.filter((key) => !taken.has(key));
  batch.wgUndo = merge(wgUndo.reverse(), (p) => p.publicKey) ?? batch.wgUndo;
  batch.fw = merge(fw, (p) => p.mark);
  batch.fwUndo = merge(fwUndo.reverse(), (p) => p.mark) ?? batch.fwUndo;
  batch.tc = merge(tc, (p) => p.key);
  batch.tcUndo = merge(tcUndo.reverse(), (p) => p.key) ?? batch.tcUndo;
  return batch;
}

/**
 * Merges per-account changes in order into one: the last upsert of a key wins, and a removal of a key that is also
 * upserted is dropped (the upsert replaces it). Null when nothing is left.
 */
export function merge<T, K>(list: Array<{ upsert: T[]; remove: K[] } | null>, keyOf: (item: T) => K): { upsert: T[]; remove: K[] } | null {
  const upsert = new Map<K, T>();
  const remove = new Set<K>();
  for (const change of list) {
    if (!change) continue;
    for (const key of change.remove) {
      remove.add(key);
      upsert.delete(key);
    }
    for (const item of change.upsert) {
      upsert.set(keyOf(item), item);
      remove.delete(keyOf(item));
    }
  }
  return upsert.size || remove.size ? { upsert: [...upsert.values()], remove: [...remove] } : null;
}
