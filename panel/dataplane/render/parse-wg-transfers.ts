// Lean parser of `wg show <if> dump` for the traffic sampler: public keys and transfer counters only, in dump order.

/**
 * The transfer counters of one interface's peers, column-wise: `keys[i]` received `rx[i]` bytes from the peer and
 * sent it `tx[i]` bytes (`transfer-rx`, `transfer-tx` of the dump). Dump order (no sorting).
 */
export interface PeerTransfers {
  keys: string[];
  rx: Float64Array;
  tx: Float64Array;
  /**
   * The peers without any allowed IP, with their endpoint (null when none): parked peers — a suspended account's
   * peer keeps its counters there, passing no traffic, until a sample has counted them and it is removed. Absent or
   * empty when there is none.
   */
  parked?: ParkedPeer[];
}

/** A peer without allowed IPs: its public key and its endpoint (`ip:port`, null when it never sent a packet). */
export type ParkedPeer = [publicKey: string, endpoint: string | null];

/**
 * Reads the peer lines of a dump (`public-key preshared-key endpoint allowed-ips latest-handshake transfer-rx
 * transfer-tx persistent-keepalive`, tab-separated, after the interface line) without splitting lines into arrays
 * or building one object per peer: one scan of the text, three typed columns, and the parked peers (allowed-ips
 * `(none)`) with their endpoints. Throws on a malformed dump.
 */
export function parseWgTransfers(text: string): PeerTransfers {
  let pos = text.indexOf('\n');
  if (pos < 0 || text.slice(0, pos).split('\t').length !== 4) throw new Error('unexpected wg dump: interface line');
  pos++;
  const keys: string[] = [];
  const parked: ParkedPeer[] = [];
  let capacity = 1024;
  let rx = new Float64Array(capacity);
  let tx = new Float64Array(capacity);
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    if (end > pos) {
      const tabs = tabPositions(text, pos, end);
      if (tabs === null) throw new Error('unexpected wg dump: peer line');
      const n = keys.length;
      if (n === capacity) {
        capacity *= 2;
        rx = grow(rx, capacity);
        tx = grow(tx, capacity);
      }
      keys.push(text.slice(pos, tabs[0]));
      rx[n] = Number(text.slice(tabs[4] + 1, tabs[5]));
      tx[n] = Number(text.slice(tabs[5] + 1, tabs[6]));
      if (!Number.isFinite(rx[n]) || !Number.isFinite(tx[n])) throw new Error('unexpected wg dump: transfer counters');
      if (tabs[3] - tabs[2] === NONE.length + 1 && text.startsWith(NONE, tabs[2] + 1)) {
        const endpoint = text.slice(tabs[1] + 1, tabs[2]);
        parked.push([keys[n], endpoint === NONE ? null : endpoint]);
      }
    }
    pos = end + 1;
  }
  return { keys, rx: rx.subarray(0, keys.length), tx: tx.subarray(0, keys.length), parked };
}

const TABS = new Int32Array(7);
/** What the dump prints for an absent endpoint or an empty allowed-ips list. */
const NONE = '(none)';

/** Positions of the 7 tabs of a peer line in [start, end), or null when the line has another column count. */
function tabPositions(text: string, start: number, end: number): Int32Array | null {
  let at = start;
  for (let i = 0; i < 7; i++) {
    const tab = text.indexOf('\t', at);
    if (tab < 0 || tab >= end) return null;
    TABS[i] = tab;
    at = tab + 1;
  }
  return text.indexOf('\t', at) >= 0 && text.indexOf('\t', at) < end ? null : TABS;
}

/** A copy of `column` with room for `capacity` entries (the parsers' columns double as they fill). */
export function grow(column: Float64Array<ArrayBuffer>, capacity: number): Float64Array<ArrayBuffer> {
  const next = new Float64Array(capacity);
  next.set(column);
  return next;
}
