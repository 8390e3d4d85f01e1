// X25519 (RFC 7748) public keys in plain JavaScript, without node:crypto key objects (see keys.ts for why): a fixed-base
// comb on edwards25519 (the twisted Edwards twin of Curve25519), mapped back to the Montgomery u-coordinate, at most 32
// point additions from a table instead of a ladder's 255 steps. Not constant-time: used for keys the panel makes or
// checks, never in a protocol exchange. The unit tests check it against RFC 7748's ladder (test/helpers/x25519-ladder.ts).
import { P, encode, invert, reduce } from './x25519-field.ts';

/** A point in extended coordinates: x = X/Z, y = Y/Z, x·y = T/Z. */
interface Point {
  X: bigint;
  Y: bigint;
  Z: bigint;
  T: bigint;
}

/** A table point ready for addition: Y+X, Y-X, 2d·T, 2Z. */
interface CachedPoint {
  ypx: bigint;
  ymx: bigint;
  t2d: bigint;
  z2: bigint;
}

/** d = -121665/121666 of edwards25519 (-x² + y² = 1 + d·x²·y²). */
const D = reduce((P - 121665n) * invert(121666n));
const D2 = reduce(2n * D);
const IDENTITY: Point = { X: 0n, Y: 1n, Z: 1n, T: 0n };

/** a^e mod p by square and multiply (table set-up only). */
function power(a: bigint, e: bigint): bigint {
  let result = 1n;
  for (; e > 0n; e >>= 1n) {
    if (e & 1n) result = reduce(result * a);
    a = reduce(a * a);
  }
  return result;
}

/**
 * The base point: y = 4/5, the image of Montgomery's u = 9 under y = (u - 1)/(u + 1); x from the curve equation (either
 * root: a point and its negative have the same u-coordinate, so the keys do not depend on the choice).
 */
function basePoint(): Point {
  const y = reduce(4n * invert(5n));
  const yy = reduce(y * y);
  const xx = reduce((yy + P - 1n) * invert(reduce(D * yy) + 1n));
  let x = power(xx, (P + 3n) / 8n);
  if (reduce(x * x) !== xx) x = reduce(x * power(2n, (P - 1n) / 4n));
  return { X: x, Y: y, Z: 1n, T: reduce(x * y) };
}

function cached(q: Point): CachedPoint {
  return { ypx: reduce(q.Y + q.X), ymx: reduce(q.Y + P - q.X), t2d: reduce(q.T * D2), z2: reduce(2n * q.Z) };
}

/** p + q (add-2008-hwcd-3 for a = -1: complete, so it also doubles and adds the identity). Every coordinate below p. */
function add(p: Point, q: CachedPoint): Point {
  const a = reduce((p.Y + P - p.X) * q.ymx);
  const b = reduce((p.Y + p.X) * q.ypx);
  const c = reduce(p.T * q.t2d);
  const d = reduce(p.Z * q.z2);
  const e = b + P - a, f = d + P - c, g = d + c, h = b + a;
  return { X: reduce(e * f), Y: reduce(g * h), Z: reduce(f * g), T: reduce(e * h) };
}

/**
 * table[i][j - 1] = j·256^i·B for the 32 bytes of a scalar and j = 1..255 (8,160 points, about 1.5 MB), built on first
 * use (about 73,000 multiplications, some 15 ms).
 */
let table: CachedPoint[][] | null = null;

function buildTable(): CachedPoint[][] {
  const rows: CachedPoint[][] = [];
  let base = basePoint();
  for (let i = 0; i < 32; i++) {
    const step = cached(base);
    const row = [step];
    let point = base;
    for (let j = 2; j <= 256; j++) {
      point = add(point, step);
      if (j < 256) row.push(cached(point));
    }
    rows.push(row);
    base = point;
  }
  return rows;
}

/**
 * X25519(k, 9) of RFC 7748, the public key of the private key `k` (32 bytes, clamped here as decodeScalar25519 does):
 * k·B on edwards25519 by one table addition per non-zero byte of k, then u = (1 + y)/(1 - y) = (Z + Y)/(Z - Y).
 * The same 32 little-endian bytes as the ladder (`wg pubkey`).
 */
export function x25519PublicKey(k: Uint8Array): Buffer {
  table ??= buildTable();
  let acc = IDENTITY;
  for (let i = 0; i < 32; i++) {
    const byte = i === 0 ? k[0] & 248 : i === 31 ? (k[31] & 127) | 64 : k[i];
    if (byte) acc = add(acc, table[i][byte - 1]);
  }
  return encode(reduce(reduce(acc.Z + acc.Y) * invert(reduce(acc.Z + P - acc.Y))));
}
