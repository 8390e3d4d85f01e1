// WireGuard key math (X25519 via node:crypto): key pairs, public-from-private, key format checks.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';

/** A base64 key pair as `wg genkey | wg pubkey` prints it. */
export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

const KEY_PATTERN = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** True when `value` is a base64 WireGuard key: 32 bytes, 44 characters with one `=` padding. */
export function isValidKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value) && Buffer.from(value, 'base64').length === 32;
}

/** Generates a fresh key pair (the private key is clamped by X25519 itself, like `wg genkey`). */
export function generateKeyPair(): KeyPair {
  const { privateKey } = generateKeyPairSync('x25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const raw = Buffer.from(jwk.d ?? '', 'base64url');
  const publicRaw = Buffer.from(jwk.x ?? '', 'base64url');
  return { privateKey: clamp(raw).toString('base64'), publicKey: publicRaw.toString('base64') };
}

/** Public key of a base64 private key, as `wg pubkey` computes it. Throws on a malformed key. */
export function publicKeyFrom(privateKeyBase64: string): string {
  if (!isValidKey(privateKeyBase64)) throw new Error('Key is not the correct length or format');
  // A JWK import takes OpenSSL's raw-key path (no PKCS#8 decoder): about 10x faster than importing DER, the same
  // result (clamping included). Node requires `x` to be a string and does not read it for a private key.
  const d = Buffer.from(privateKeyBase64, 'base64').toString('base64url');
  const jwk = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d, x: '' }, format: 'jwk' }).export({ format: 'jwk' });
  return Buffer.from(jwk.x ?? '', 'base64url').toString('base64');
}

/** Applies the X25519 clamping `wg genkey` applies, so generated keys print identically. */
function clamp(raw: Buffer): Buffer {
  const out = Buffer.from(raw);
  out[0] &= 248;
  out[31] = (out[31] & 127) | 64;
  return out;
}
