// X25519 (RFC 7748) in plain JavaScript: WireGuard public keys without node:crypto key objects (see keys.ts for why).
import { P, decode, encode, invert, reduce } from './x25519-field.ts';
import { x25519Base } from './x25519-base.ts';

const A24 = 121665n;

/**
 * X25519(k, u) of RFC 7748 section 5: the scalar `k` (32 bytes, clamped here as the RFC's decodeScalar25519 does)
 * times the u-coordinate `u` (32 bytes, top bit masked), by the Montgomery ladder over BigInts (about 0.6 ms). Returns
 * 32 bytes, little endian. Not constant-time: used for keys the panel makes or checks, never in a protocol exchange.
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

/**
 * The X25519 public key of a 32-byte private key (`wg pubkey`): the same value as `x25519(privateKey, 9)`, computed by
 * the fixed-base comb of x25519-base.ts (at most 32 table additions; about a sixth of the ladder's time).
 */
export function x25519PublicKey(privateKey: Uint8Array): Buffer {
  return x25519Base(privateKey);
}
