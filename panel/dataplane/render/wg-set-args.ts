// Pure builder of `wg set` argument vectors for a batch of peer changes (one call; chunked only when huge).
import type { PeerChanges } from '../wireguard/driver.ts';

/** Peers per `wg set` call; one call carries the whole batch unless it is larger than this. */
const WG_SET_CHUNK = 500;

/**
 * Renders the argv (after `wg`) of the `wg set` calls applying `changes` on `iface`:
 * `set IF peer K remove ... peer K allowed-ips A,B persistent-keepalive N [endpoint E] ...`. Removals come first, then
 * upserts in the given order (an allowed IP named twice ends with the later peer, as in wg). `allowed-ips` is
 * given in full, which replaces the peer's list; an empty list is passed as `""` and clears it.
 * Returns [] when there is nothing to do.
 */
export function renderWgSetArgs(iface: string, changes: PeerChanges, chunk = WG_SET_CHUNK): string[][] {
  const items: string[][] = [
    ...changes.remove.map((key) => ['peer', key, 'remove']),
    ...changes.upsert.map((peer) => [
      'peer',
      peer.publicKey,
      'allowed-ips',
      peer.allowedIps.join(','),
      'persistent-keepalive',
      String(peer.persistentKeepalive),
      ...(peer.endpoint ? ['endpoint', peer.endpoint] : []),
    ]),
  ];
  const calls: string[][] = [];
  for (let i = 0; i < items.length; i += chunk) {
    calls.push(['set', iface, ...items.slice(i, i + chunk).flat()]);
  }
  return calls;
}
