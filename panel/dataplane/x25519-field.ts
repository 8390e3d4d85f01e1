// Arithmetic modulo 2^255 - 19 over BigInts, shared by the X25519 ladder (x25519.ts) and the fixed-base comb (x25519-base.ts).

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

/** `x`^(2^n) mod p: n squarings. */
function squareTimes(x: bigint, n: number): bigint {
  for (let i = 0; i < n; i++) x = reduce(x * x);
  return x;
}

/**
 * `z`^(p-2) mod p: the inverse of `z` (Fermat; 0 for 0), by the usual addition chain for 2^255 - 21 (254 squarings and
 * 11 multiplications, where plain square and multiply takes about 250 more multiplications).
 */
export function invert(z: bigint): bigint {
  const z2 = reduce(z * z);
  const z9 = reduce(z * squareTimes(z2, 2));
  const z11 = reduce(z2 * z9);
  const z5 = reduce(z9 * reduce(z11 * z11)); // z^(2^5 - 1)
  const z10 = reduce(z5 * squareTimes(z5, 5)); // z^(2^10 - 1)
  const z20 = reduce(z10 * squareTimes(z10, 10));
  const z40 = reduce(z20 * squareTimes(z20, 20));
  const z50 = reduce(z10 * squareTimes(z40, 10));
  const z100 = reduce(z50 * squareTimes(z50, 50));
  const z200 = reduce(z100 * squareTimes(z100, 100));
  const z250 = reduce(z50 * squareTimes(z200, 50));
  return reduce(z11 * squareTimes(z250, 5)); // z^(2^255 - 32 + 11)
}

/** Little-endian bytes → integer. */
export function decode(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
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
