// The one peer order both drivers report: as `wg show` sorts (latest handshake first, never last), ties by key.
import type { PeerState } from '../wireguard/driver.ts';

/** Returns a new array sorted like `wg show` lists peers, with public key as a stable tie-break. */
export function sortPeers<T extends Pick<PeerState, 'latestHandshake' | 'publicKey'>>(peers: T[]): T[] {
  return [...peers].sort((a, b) => {
    if (a.latestHandshake !== b.latestHandshake) {
      if (a.latestHandshake === 0) return 1;
      if (b.latestHandshake === 0) return -1;
      return b.latestHandshake - a.latestHandshake;
    }
    return a.publicKey < b.publicKey ? -1 : a.publicKey > b.publicKey ? 1 : 0;
  });
}
