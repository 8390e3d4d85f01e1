// Arithmetic modulo 2^255 - 19 over BigInts: the fixed-base comb's (x25519.ts) and the tests' RFC 7748 ladder's
// (test/helpers/x25519-ladder.ts).

/** The field prime 2^255 - 19. */
export const P = (1n << 255n) - 19n;
const LOW = (1n << 255n) - 1n;

/**
 * `a` mod p for 0 <= a < 2^512 (a product of two values below 2p, or below p times 121666): 2^255 = 19 mod p, so the
 * high part folds down twice, then at most one p comes off (faster than BigInt's `%` here).
 */
export function reduce(a: bigint): bigint {
  a = (a & LOW) + 19n * (a >> 255n);
  a = (a & LOW) + 19n * (a >> 255n);
  return a >= P ? a - P : a;
}

/**
 * The inverse of `z` mod p (0 for 0), for 0 <= z < p, by the extended Euclidean algorithm over BigInts: about half the
 * time of Fermat's z^(p-2) (254 squarings). Not constant-time, like everything here.
 */
export function invert(z: bigint): bigint {
  let r0 = P, r1 = z, t0 = 0n, t1 = 1n;
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [t0, t1] = [t1, t0 - q * t1];
  }
  return r0 === P ? 0n : t0 < 0n ? t0 + P : t0;
}

/** Integer below 2^256 → 32 little-endian bytes. */
export function encode(n: bigint): Buffer {
  const bytes = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) {
    bytes[i] = Number(n & 255n);
    n >>= 8n;
  }
  return bytes;
}
