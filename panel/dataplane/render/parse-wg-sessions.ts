// Lean parsers for GET /wireguard/online: only the peers with a recent handshake, from a UAPI get=1 answer or a dump.
import type { PeerSession } from '../wireguard/driver.ts';
import { sortPeers } from './peer-order.ts';

const KEY_HEX_LENGTH = 64;
const BASE64 = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', (c) => c.charCodeAt(0));
/** Hex digit values by character code (lower case, as UAPI writes them); -1 for anything else. */
const HEX = Int8Array.from({ length: 256 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1));
const CODES = new Array<number>(44);

/**
 * The base64 form (as `wg show` prints keys) of the 64 hex digits at `at` in `text`, made from character codes
 * (twelve bits, three hex digits, at a time) in one string: no buffer, no intermediate strings.
 */
function hexKeyToBase64(text: string, at: number): string {
  let bad = 0;
  let o = 0;
  for (let i = at; i < at + 63; i += 3) {
    const a = HEX[text.charCodeAt(i)], b = HEX[text.charCodeAt(i + 1)], c = HEX[text.charCodeAt(i + 2)];
    bad |= a | b | c;
    const v = (a << 8) | (b << 4) | c;
    CODES[o++] = BASE64[v >> 6];
    CODES[o++] = BASE64[v & 63];
  }
  const last = HEX[text.charCodeAt(at + 63)];
  if ((bad | last) < 0) throw new Error('unexpected UAPI answer: public_key');
  CODES[42] = BASE64[last << 2];
  CODES[43] = 0x3d; // '='
  return String.fromCharCode.apply(null, CODES);
}

/**
 * The peers of a wireguard-go `get=1` answer (see parseWgUapiTransfers for the format) whose
 * `last_handshake_time_sec` is at or after `since` (> 0), in `wg show`'s order. The answer is read as one latin1
 * string (line names told apart by their first character, numbers read digit by digit); a peer's key is converted and
 * its endpoint sliced only when it is one of them, so a listing of a few online peers among 50,000 makes a few objects.
 * Throws on `errno` other than 0, a missing `errno`, or a malformed line.
 */
export function parseWgUapiSessions(answer: Buffer, since: number): PeerSession[] {
  const text = answer.toString('latin1');
  const out: PeerSession[] = [];
  let keyAt = -1;
  let endpointAt = -1;
  let endpointEnd = -1;
  let handshake = 0;
  let rx = 0;
  let tx = 0;
  let errno: number | null = null;
  const closePeer = () => {
    if (keyAt < 0 || handshake < since || handshake === 0) return;
    out.push({
      publicKey: hexKeyToBase64(text, keyAt),
      endpoint: endpointAt < 0 ? null : text.slice(endpointAt, endpointEnd),
      latestHandshake: handshake,
      transferRx: rx,
      transferTx: tx,
    });
  };
  const number = (from: number, to: number): number => {
    if (from === to) throw new Error('unexpected UAPI answer: empty number');
    let value = 0;
    for (let i = from; i < to; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) throw new Error('unexpected UAPI answer: number');
      value = value * 10 + digit;
    }
    return value;
  };
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    if (end === pos) break; // the empty line ends the answer
    if (errno !== null) throw new Error('unexpected UAPI answer: line after errno');
    const eq = text.indexOf('=', pos);
    if (eq < 0 || eq > end) throw new Error('unexpected UAPI answer: line without =');
    const name = eq - pos;
    switch (text.charCodeAt(pos)) {
      case 0x70: // p: public_key (private_key, preshared_key, protocol_version, persistent_keepalive_interval: skipped)
        if (name === 10 && text.startsWith('public_key', pos)) {
          if (end - eq - 1 !== KEY_HEX_LENGTH) throw new Error('unexpected UAPI answer: public_key');
          closePeer();
          keyAt = eq + 1;
          endpointAt = -1;
          handshake = rx = tx = 0;
        }
        break;
      case 0x6c: // l: last_handshake_time_sec (…_nsec, listen_port: skipped)
        if (keyAt >= 0 && name === 23 && text.startsWith('last_handshake_time_sec', pos)) handshake = number(eq + 1, end);
        break;
      case 0x72: // r: rx_bytes
        if (keyAt >= 0 && name === 8 && text.startsWith('rx_bytes', pos)) rx = number(eq + 1, end);
        break;
      case 0x74: // t: tx_bytes
        if (keyAt >= 0 && name === 8 && text.startsWith('tx_bytes', pos)) tx = number(eq + 1, end);
        break;
      case 0x65: // e: endpoint, errno
        if (keyAt >= 0 && name === 8 && text.startsWith('endpoint', pos)) {
          endpointAt = eq + 1;
          endpointEnd = end;
        } else if (name === 5 && text.startsWith('errno', pos)) {
          errno = number(eq + 1, end);
          closePeer();
        }
        break;
    }
    pos = end + 1;
  }
  if (errno === null) throw new Error('unexpected UAPI answer: no errno');
  if (errno !== 0) throw new Error(`UAPI get failed: errno=${errno}`);
  return sortPeers(out);
}

/**
 * The same from `wg show <if> dump` (kernel WireGuard): peer lines `public-key preshared-key endpoint allowed-ips
 * latest-handshake transfer-rx transfer-tx persistent-keepalive`; a line is split only when its handshake is recent.
 * Throws on a malformed dump.
 */
export function parseWgDumpSessions(text: string, since: number): PeerSession[] {
  const out: PeerSession[] = [];
  let pos = text.indexOf('\n');
  if (pos < 0) throw new Error('unexpected wg dump: interface line');
  pos++;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    if (end > pos) {
      let tab = pos - 1;
      const tabs: number[] = [];
      while (tabs.length < 7 && (tab = text.indexOf('\t', tab + 1)) >= 0 && tab < end) tabs.push(tab);
      if (tabs.length !== 7) throw new Error('unexpected wg dump: peer line');
      const handshake = Number(text.slice(tabs[3] + 1, tabs[4]));
      if (handshake !== 0 && handshake >= since) {
        const endpoint = text.slice(tabs[1] + 1, tabs[2]);
        out.push({
          publicKey: text.slice(pos, tabs[0]),
          endpoint: endpoint === '(none)' ? null : endpoint,
          latestHandshake: handshake,
          transferRx: Number(text.slice(tabs[4] + 1, tabs[5])),
          transferTx: Number(text.slice(tabs[5] + 1, tabs[6])),
        });
      }
    }
    pos = end + 1;
  }
  return sortPeers(out);
}
