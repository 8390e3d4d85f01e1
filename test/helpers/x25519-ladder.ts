// X25519(k, u) of RFC 7748 by the Montgomery ladder over BigInts: the reference the panel's fixed-base comb
// (panel/dataplane/x25519.ts) is checked against in the unit tests, on the same field arithmetic.
import { P, encode, invert, reduce } from '../../panel/dataplane/x25519-field.ts';

/** Little-endian bytes → integer. */
function decode(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

const A24 = 121665n;

/**
 * X25519(k, u) of RFC 7748 section 5: the scalar `k` (32 bytes, clamped here as the RFC's decodeScalar25519 does)
 * times the u-coordinate `u` (32 bytes, top bit masked), by the Montgomery ladder over BigInts (about 0.6 ms). Returns
 * 32 bytes, little endian.
 */
export function x25519(k: Uint8Array, u: Uint8Array): Buffer {
  const scalar = Uint8Array.from(k);
  scalar[0] &= 248;
  scalar[31] = (scalar[31] & 127) | 64;
  const uBytes = Uint8Array.from(u);
  uBytes[31] &= 127;
  const x1 = reduce(decode(uBytes));
  let x2 = 1n, z2 = 0n, x3 = x1, z3 = 1n;
  let swap = 0;
  for (let bit = 254; bit >= 0; bit--) {
    const kt = (scalar[bit >> 3] >> (bit & 7)) & 1;
    swap ^= kt;
    if (swap) [x2, x3, z2, z3] = [x3, x2, z3, z2];
    swap = kt;
    // every value below p; a difference gets p added, so each product is non-negative and below (2p)^2
    const a = x2 + z2, aa = reduce(a * a), b = x2 - z2 + P, bb = reduce(b * b), e = aa >= bb ? aa - bb : aa - bb + P;
    const c = x3 + z3, d = x3 - z3 + P, da = reduce(d * a), cb = reduce(c * b);
    const sum = da + cb, diff = da - cb + P;
    x3 = reduce(sum * sum);
    z3 = reduce(x1 * reduce(diff * diff));
    x2 = reduce(aa * bb);
    z2 = reduce(e * reduce(aa + A24 * e));
  }
  if (swap) [x2, z2] = [x3, z3];
  return encode(reduce(x2 * invert(z2)));
}
