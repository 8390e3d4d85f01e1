// WireGuard key math (X25519 in plain JavaScript, see x25519.ts): key pairs, public keys, key format checks.
import { randomFillSync } from 'node:crypto';
import { x25519PublicKey } from './x25519.ts';

/** A base64 key pair as `wg genkey | wg pubkey` prints it. */
export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/** CSPRNG bytes for private keys, filled 4 KiB at a time (one call per 128 keys); each byte is used once, then zeroed. */
const keyBytes = Buffer.alloc(4096);
let keyBytesAt = keyBytes.length;

const KEY_PATTERN = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** True when `value` is a base64 WireGuard key: 32 bytes, 44 characters with one `=` padding. */
export function isValidKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value) && Buffer.from(value, 'base64').length === 32;
}

/**
 * Generates a fresh key pair as `wg genkey | wg pubkey` does: 32 random bytes, clamped, and their public key.
 *
 * No node:crypto key objects: on Node 20.20 (its OpenSSL 3.0) they lock up the thread that uses them. A garbage
 * collection during the JWK export of a key `generateKeyPairSync` made runs the finalizer of that key's generation
 * job, which takes the lock the export holds: a self-deadlock (the panel's main thread froze; a loop of the former
 * `generateKeyPairSync` + export froze within about 15,000 calls, every time). Without the generation job,
 * `createPrivateKey` + `createPublicKey` + export in a loop still ended, after 100,000 to 150,000 calls, spinning
 * forever on an OpenSSL lock inside `createPrivateKey`. A panel makes a key pair for every account.
 */
export function generateKeyPair(): KeyPair {
  if (keyBytesAt === keyBytes.length) {
    randomFillSync(keyBytes);
    keyBytesAt = 0;
  }
  const raw = keyBytes.subarray(keyBytesAt, (keyBytesAt += 32));
  const privateKey = clamp(raw).toString('base64');
  raw.fill(0);
  return { privateKey, publicKey: publicKeyFrom(privateKey) };
}

/** Public key of a base64 private key, as `wg pubkey` computes it (X25519, no key objects). Throws on a malformed key. */
export function publicKeyFrom(privateKeyBase64: string): string {
  if (!isValidKey(privateKeyBase64)) throw new Error('Key is not the correct length or format');
  return x25519PublicKey(Buffer.from(privateKeyBase64, 'base64')).toString('base64');
}

/** Applies the X25519 clamping `wg genkey` applies, so generated keys print identically. */
function clamp(raw: Buffer): Buffer {
  const out = Buffer.from(raw);
  out[0] &= 248;
  out[31] = (out[31] & 127) | 64;
  return out;
}
