// Lean parser of a wireguard-go UAPI `get=1` answer for the traffic sampler: public keys and transfer counters only.
import { grow, type ParkedPeer, type PeerTransfers } from './parse-wg-transfers.ts';

const NL = 0x0a;
const EQ = 0x3d;
const PUBLIC_KEY = Buffer.from('public_key');
const RX_BYTES = Buffer.from('rx_bytes');
const TX_BYTES = Buffer.from('tx_bytes');
const ERRNO = Buffer.from('errno');
const ENDPOINT = Buffer.from('endpoint');
const ALLOWED_IP = Buffer.from('allowed_ip');
const KEY_HEX_LENGTH = 64;

/**
 * Reads the answer to `get=1` of the cross-platform userspace interface (wireguard.com/xplatform): `key=value` lines,
 * the interface's first (`private_key`, `listen_port`, ...), then per peer `public_key=<64 hex>` followed by its
 * lines (`rx_bytes`, `tx_bytes`, `allowed_ip`, ...), then `errno=N` and an empty line. Returns the same columns as
 * {@link import('./parse-wg-transfers.ts').parseWgTransfers} (keys in base64, as the store and `wg show` hold them;
 * `rx` bytes received from the peer, `tx` sent to it), in answer order, and the peers without an `allowed_ip` line
 * (parked) with their `endpoint`. Works on the bytes: one scratch buffer for the key conversion, no line strings but
 * a parked peer's endpoint. Throws on `errno` other than 0, a missing `errno`, or a malformed line.
 */
export function parseWgUapiTransfers(answer: Buffer): PeerTransfers {
  const keys: string[] = [];
  const parked: ParkedPeer[] = [];
  // the current peer: whether it has an allowed IP, and where its endpoint value lies in the answer
  let allowed = true;
  let endpointAt = -1;
  let endpointEnd = -1;
  const closePeer = () => {
    if (!allowed) parked.push([keys[keys.length - 1], endpointAt < 0 ? null : answer.toString('latin1', endpointAt, endpointEnd)]);
  };
  let capacity = 1024;
  let rx = new Float64Array(capacity);
  let tx = new Float64Array(capacity);
  const key = Buffer.allocUnsafe(32);
  let errno: number | null = null;
  let pos = 0;
  while (pos < answer.length) {
    let end = answer.indexOf(NL, pos);
    if (end < 0) end = answer.length;
    if (end === pos) break; // the empty line ends the answer
    if (errno !== null) throw new Error('unexpected UAPI answer: line after errno');
    const eq = answer.indexOf(EQ, pos);
    if (eq < 0 || eq > end) throw new Error('unexpected UAPI answer: line without =');
    if (isName(answer, pos, eq, PUBLIC_KEY)) {
      if (end - eq - 1 !== KEY_HEX_LENGTH || key.write(answer.toString('latin1', eq + 1, end), 'hex') !== 32) {
        throw new Error('unexpected UAPI answer: public_key');
      }
      closePeer();
      allowed = false;
      endpointAt = -1;
      const n = keys.length;
      if (n === capacity) {
        capacity *= 2;
        rx = grow(rx, capacity);
        tx = grow(tx, capacity);
      }
      keys.push(key.toString('base64'));
      rx[n] = 0;
      tx[n] = 0;
    } else if (isName(answer, pos, eq, RX_BYTES) || isName(answer, pos, eq, TX_BYTES)) {
      const n = keys.length - 1;
      if (n < 0) throw new Error('unexpected UAPI answer: counter before public_key');
      const value = decimal(answer, eq + 1, end);
      if (answer[pos] === 0x72) rx[n] = value;
      else tx[n] = value;
    } else if (isName(answer, pos, eq, ALLOWED_IP)) {
      allowed = true;
    } else if (isName(answer, pos, eq, ENDPOINT)) {
      endpointAt = eq + 1;
      endpointEnd = end;
    } else if (isName(answer, pos, eq, ERRNO)) {
      errno = decimal(answer, eq + 1, end);
      closePeer();
      allowed = true;
    }
    pos = end + 1;
  }
  if (errno === null) throw new Error('unexpected UAPI answer: no errno');
  if (errno !== 0) throw new Error(`UAPI get failed: errno=${errno}`);
  return { keys, rx: rx.subarray(0, keys.length), tx: tx.subarray(0, keys.length), parked };
}

/** Whether bytes [start, end) are `name`. */
function isName(buf: Buffer, start: number, end: number, name: Buffer): boolean {
  return end - start === name.length && buf.compare(name, 0, name.length, start, end) === 0;
}

/** The unsigned decimal in [start, end) (counters stay below 2^53 for centuries of traffic); throws on anything else. */
function decimal(buf: Buffer, start: number, end: number): number {
  if (start === end) throw new Error('unexpected UAPI answer: empty number');
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = buf[i] - 0x30;
    if (digit < 0 || digit > 9) throw new Error('unexpected UAPI answer: number');
    value = value * 10 + digit;
  }
  return value;
}
