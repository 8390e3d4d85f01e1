// The counters last seen per source (one WireGuard interface, or the IKEv2 daemon), column-wise, and their packed blob form.

/**
 * The baselines of one source as one sample left them: entry `i` is the peer (WireGuard public key) or IKE SA
 * (charon's unique id) `keys[i]` of account `ids[i]`, with counters `rx[i]` (bytes received from it) and `tx[i]`
 * (bytes sent to it), all read at `sampledAt` (Unix ms). `slot` finds an entry by key. An id of -1 marks an entry
 * no longer valid (its peer left the interface: it comes back at zero).
 */
export interface BaselineSet {
  sampledAt: number;
  keys: string[];
  ids: Float64Array;
  rx: Float64Array;
  tx: Float64Array;
  slot: Map<string, number>;
}

/** Builds a set from columns (the slot map is built here). */
export function baselineSet(sampledAt: number, keys: string[], ids: Float64Array, rx: Float64Array, tx: Float64Array): BaselineSet {
  const slot = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) slot.set(keys[i], i);
  return { sampledAt, keys, ids, rx, tx, slot };
}

const FORMAT = 1;
const HEADER = 8;

/**
 * Packs a set as one blob: u32 format, u32 count, then `ids`, `rx`, `tx` as float64 columns (little endian, as the
 * typed arrays hold them on the hosts we run on), then the keys joined by `\n` in latin1 (base64 keys and decimal
 * SA ids are ASCII). Three bulk copies and one string write, whatever the count.
 */
export function packBaselines(set: BaselineSet): Buffer {
  const n = set.keys.length;
  const keys = set.keys.join('\n');
  const buf = Buffer.allocUnsafe(HEADER + 24 * n + keys.length);
  buf.writeUInt32LE(FORMAT, 0);
  buf.writeUInt32LE(n, 4);
  for (const [i, column] of [set.ids, set.rx, set.tx].entries()) {
    buf.set(new Uint8Array(column.buffer, column.byteOffset, 8 * n), HEADER + 8 * n * i);
  }
  buf.write(keys, HEADER + 24 * n, 'latin1');
  return buf;
}

/** Reads a blob written by {@link packBaselines}; throws on another format or a truncated blob. */
export function unpackBaselines(blob: Buffer, sampledAt: number): BaselineSet {
  if (blob.length < HEADER || blob.readUInt32LE(0) !== FORMAT) throw new Error('traffic baselines: unknown format');
  const n = blob.readUInt32LE(4);
  if (blob.length < HEADER + 24 * n) throw new Error('traffic baselines: truncated');
  const column = (i: number) => {
    const out = new Float64Array(n);
    new Uint8Array(out.buffer).set(blob.subarray(HEADER + 8 * n * i, HEADER + 8 * n * (i + 1)));
    return out;
  };
  const text = blob.toString('latin1', HEADER + 24 * n, blob.length);
  const keys = n === 0 ? [] : text.split('\n');
  if (keys.length !== n) throw new Error('traffic baselines: key count differs');
  return baselineSet(sampledAt, keys, column(0), column(1), column(2));
}
