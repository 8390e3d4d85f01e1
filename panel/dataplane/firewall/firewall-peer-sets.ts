// A server's peer mark sets (`vpnhost-<server>-4` / `-6`: address → mark, read by its mangle chain) and the address
// index a peer batch is checked against. The engine passes the families the server's sets exist in (`families`).
import { E } from '../../../shared/wire/error-texts.ts';
import { markSetName } from '../render/firewall-chains.ts';
import { parseIpsetSave, renderSetAdd, renderSetDel, renderSetSync, type SavedSet } from '../render/firewall-ipset.ts';
import type { FirewallBackend } from './firewall-backend.ts';
import type { NormalPeer, NormalServer } from './firewall-checks.ts';
import { FAMILIES, FirewallError, type Family } from './firewall.ts';

/** The live mark sets of one server by family (null: absent). */
export type SetState = Map<Family, SavedSet | null>;

/** A peer's addresses: IPv4, and IPv6 when it has one. */
function addressesOf(peer: NormalPeer): string[] {
  return peer.addressIpv6 ? [peer.address, peer.addressIpv6] : [peer.address];
}

/** The peer's address in the set of the family, or null when it has none there (IPv6 is optional). */
function setAddress(peer: NormalPeer, family: Family): string | null {
  return family === 4 ? peer.address : peer.addressIpv6 || null;
}

/** Live sets of one server (null entries when absent), read before a full reconcile. */
export async function readSetState(backend: FirewallBackend, name: string): Promise<SetState> {
  const names = new Set(await backend.ipsetNames());
  const state: SetState = new Map();
  for (const family of FAMILIES) {
    const set = markSetName(name, family);
    state.set(family, names.has(set) ? (parseIpsetSave(await backend.ipsetSave(set)).get(set) ?? null) : null);
  }
  return state;
}

/** The `ipset restore` lines that bring the server's sets from `sets` to exactly its peers (created when absent). */
export function setSyncLines(server: NormalServer, sets: SetState, families: Family[]): string[] {
  const lines: string[] = [];
  for (const family of families) {
    const wanted = new Map<string, number>();
    for (const peer of server.peers.values()) {
      const address = setAddress(peer, family);
      if (address) wanted.set(address, peer.mark);
    }
    lines.push(...renderSetSync(sets.get(family) ?? null, markSetName(server.input.name, family), family, wanted));
  }
  return lines;
}

/** `destroy` lines of the live sets (per `sets`) of the families the server no longer has. */
export function staleSetLines(name: string, sets: SetState, families: Family[]): string[] {
  return FAMILIES.filter((f) => !families.includes(f) && sets.get(f)).map((f) => `destroy ${markSetName(name, f)}`);
}

/** `destroy` lines of the server's sets that exist on the host (the server is removed). */
export async function destroySetLines(backend: FirewallBackend, name: string): Promise<string[]> {
  const sets = new Set(await backend.ipsetNames());
  return FAMILIES.map((f) => markSetName(name, f))
    .filter((s) => sets.has(s))
    .map((s) => `destroy ${s}`);
}

/**
 * Refuses a batch (IP_IN_USE) with an address another peer of the server holds, unless that peer is removed or
 * upserted onto other addresses in the same batch. O(batch) through the address index.
 */
export function checkAddressesFree(server: NormalServer, upserts: Map<number, NormalPeer>, removing: Set<number>): void {
  for (const peer of upserts.values()) {
    for (const address of addressesOf(peer)) {
      const holder = server.addresses.get(address);
      if (holder === undefined || holder === peer.mark || removing.has(holder)) continue;
      const moving = upserts.get(holder);
      if (moving && !addressesOf(moving).includes(address)) continue;
      throw new FirewallError(E.IP_IN_USE);
    }
  }
}

/** The set lines of a batch: removed peers and the old addresses of re-addressed ones out, then every upsert in. */
export function batchSetLines(server: NormalServer, upserts: Map<number, NormalPeer>, removing: Set<number>, families: Family[]): string[] {
  const name = server.input.name;
  const lines: string[] = [];
  const each = (peer: NormalPeer, line: (set: string, address: string) => string) => {
    for (const family of families) {
      const address = setAddress(peer, family);
      if (address !== null) lines.push(line(markSetName(name, family), address));
    }
  };
  for (const mark of removing) {
    const old = server.peers.get(mark);
    if (old && !upserts.has(mark)) each(old, renderSetDel);
  }
  for (const peer of upserts.values()) {
    const old = server.peers.get(peer.mark);
    if (old && (old.address !== peer.address || old.addressIpv6 !== peer.addressIpv6)) each(old, renderSetDel);
  }
  for (const peer of upserts.values()) each(peer, (set, address) => renderSetAdd(set, address, peer.mark));
  return lines;
}

/** Applies a written batch to the server's peers by mark and its address index. */
export function indexBatch(server: NormalServer, upserts: Map<number, NormalPeer>, removing: Set<number>): void {
  const unindex = (peer: NormalPeer) => {
    for (const a of addressesOf(peer)) if (server.addresses.get(a) === peer.mark) server.addresses.delete(a);
  };
  for (const mark of [...removing, ...upserts.keys()]) {
    const old = server.peers.get(mark);
    if (old) unindex(old);
    server.peers.delete(mark);
  }
  for (const peer of upserts.values()) {
    server.peers.set(peer.mark, peer);
    for (const a of addressesOf(peer)) server.addresses.set(a, peer.mark);
  }
}
