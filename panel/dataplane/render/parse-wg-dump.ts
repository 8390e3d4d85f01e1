// Pure parser of `wg show <if> dump` (tab-separated; first line the interface, then one line per peer).
import type { PeerState } from '../driver.ts';
import { sortPeers } from './peer-order.ts';

/** What the dump says about an interface. The private key column is read past and never returned. */
export interface WgDump {
  /** Public key, or null when no private key is set (`(none)`). */
  publicKey: string | null;
  /** Listen port; 0 when unset. */
  listenPort: number;
  /** Peers in {@link sortPeers} order. */
  peers: PeerState[];
}

const none = (value: string | undefined): string | null => (value === undefined || value === '(none)' ? null : value);

/**
 * Parses the dump. Interface line: `private-key public-key listen-port fwmark`. Peer lines:
 * `public-key preshared-key endpoint allowed-ips latest-handshake transfer-rx transfer-tx persistent-keepalive`
 * where `(none)` marks absent values and `off` a disabled keepalive. Throws on a malformed dump.
 */
export function parseWgDump(text: string): WgDump {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const head = lines.shift()?.split('\t');
  if (!head || head.length !== 4) throw new Error('unexpected wg dump: interface line');
  const peers = lines.map((line): PeerState => {
    const cols = line.split('\t');
    if (cols.length !== 8) throw new Error('unexpected wg dump: peer line');
    const [publicKey, , endpoint, allowedIps, handshake, rx, tx, keepalive] = cols;
    const ips = none(allowedIps);
    return {
      publicKey,
      endpoint: none(endpoint),
      allowedIps: ips ? ips.split(',') : [],
      latestHandshake: Number(handshake),
      transferRx: Number(rx),
      transferTx: Number(tx),
      persistentKeepalive: keepalive === 'off' ? 0 : Number(keepalive),
    };
  });
  return { publicKey: none(head[1]), listenPort: Number(head[2]) || 0, peers: sortPeers(peers) };
}
