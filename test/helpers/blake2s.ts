// BLAKE2s (RFC 7693) with a key and any output length: WireGuard's MAC1 needs keyed BLAKE2s-128, which node:crypto lacks.

const IV = new Uint32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

function compress(h: Uint32Array, block: Uint8Array, counter: number, last: boolean): void {
  const m = new Uint32Array(16);
  for (let i = 0; i < 16; i++) m[i] = block[4 * i] | (block[4 * i + 1] << 8) | (block[4 * i + 2] << 16) | (block[4 * i + 3] << 24);
  const v = new Uint32Array(16);
  v.set(h);
  v.set(IV, 8);
  v[12] ^= counter;
  if (last) v[14] = ~v[14];
  const g = (a: number, b: number, c: number, d: number, x: number, y: number) => {
    v[a] = v[a] + v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 12);
    v[a] = v[a] + v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 8);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 7);
  };
  for (const s of SIGMA) {
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/** BLAKE2s of `data` with `key` (0-32 bytes) and an output of `outLength` bytes (1-32); inputs below 2^32 bytes. */
export function blake2s(data: Uint8Array, key: Uint8Array = new Uint8Array(0), outLength = 32): Buffer {
  const h = new Uint32Array(IV);
  h[0] ^= 0x01010000 ^ (key.length << 8) ^ outLength;
  const blocks: Uint8Array[] = [];
  if (key.length > 0) {
    const first = new Uint8Array(64);
    first.set(key);
    blocks.push(first);
  }
  for (let i = 0; i < data.length; i += 64) {
    const block = new Uint8Array(64);
    block.set(data.subarray(i, i + 64));
    blocks.push(block);
  }
  if (blocks.length === 0) blocks.push(new Uint8Array(64));
  const total = (key.length > 0 ? 64 : 0) + data.length;
  for (let i = 0; i < blocks.length; i++) {
    const last = i === blocks.length - 1;
    compress(h, blocks[i], last ? total : (i + 1) * 64, last);
  }
  const out = Buffer.alloc(32);
  for (let i = 0; i < 8; i++) out.writeUInt32LE(h[i], 4 * i);
  return out.subarray(0, outLength);
}
