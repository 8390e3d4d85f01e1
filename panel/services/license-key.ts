// License keys: compact EdDSA (Ed25519) JWS with `accounts` and `exp`; synchronous verification and vendor issuing.
import { KeyObject, createPublicKey, verify } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { licenseClaimsSchema, type LicenseClaims } from '../schemas/license.ts';

/** Settings key under which a running panel records its license public key (PEM) for `panel license install`. */
export const LICENSE_PUBLIC_KEY_SETTING = 'license_public_key';

/** Why a key was refused. */
export type LicenseProblem = 'malformed' | 'signature' | 'expired' | 'no-public-key';

/** Outcome of `verifyLicenseKey`. */
export type LicenseVerdict = { ok: true; claims: LicenseClaims } | { ok: false; problem: LicenseProblem; claims?: LicenseClaims };

/** Human text of a problem (CLI output; never contains the key). */
export const LICENSE_PROBLEM_TEXT: Record<LicenseProblem, string> = {
  malformed: 'license key is malformed',
  signature: 'license key is not signed by the configured vendor key',
  expired: 'license key has expired',
  'no-public-key': 'no license public key configured (--license-public-key FILE or VPNHOST_LICENSE_PUBLIC_KEY)',
};

/** An Ed25519 public key from PEM (SPKI) text, a KeyObject or a WebCrypto key; null when absent. */
export function toLicensePublicKey(key: KeyObject | CryptoKey | string | null | undefined): KeyObject | null {
  if (!key) return null;
  let keyObject: KeyObject;
  if (typeof key === 'string') keyObject = createPublicKey(key);
  else if (key instanceof KeyObject) keyObject = key;
  else keyObject = KeyObject.from(key);
  if (keyObject.asymmetricKeyType !== 'ed25519') throw new Error('license public key must be an Ed25519 key');
  return keyObject.type === 'public' ? keyObject : createPublicKey(keyObject);
}

/**
 * Verifies a compact JWS license key: header `alg` EdDSA (no `crit`), Ed25519 signature over `header.payload` with
 * `publicKey` (node:crypto, synchronous, so `accountLimit()` can stay synchronous), claims of `licenseClaimsSchema`,
 * and `exp` after `now`. jose decodes the parts; an expired key reports its claims too.
 */
export function verifyLicenseKey(key: string, publicKey: KeyObject | null, now: Date): LicenseVerdict {
  if (!publicKey) return { ok: false, problem: 'no-public-key' };
  const parts = typeof key === 'string' ? key.trim().split('.') : [];
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return { ok: false, problem: 'malformed' };
  let claims: LicenseClaims;
  try {
    const header = decodeProtectedHeader(parts.join('.'));
    if (header.alg !== 'EdDSA' || header.crit !== undefined) return { ok: false, problem: 'malformed' };
    const parsed = licenseClaimsSchema.safeParse(decodeJwt(parts.join('.')));
    if (!parsed.success) return { ok: false, problem: 'malformed' };
    claims = parsed.data;
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  const signature = Buffer.from(parts[2], 'base64url');
  const signed = verify(null, Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii'), publicKey, signature);
  if (!signed) return { ok: false, problem: 'signature' };
  if (claims.exp * 1000 <= now.getTime()) return { ok: false, problem: 'expired', claims };
  return { ok: true, claims };
}

/** Issues a license key (vendor side): EdDSA JWS with `accounts`, `iat`, `exp`, optional `sub`. */
export async function issueLicenseKey(
  privateKey: KeyObject,
  claims: { accounts: number; expires: Date; subject?: string },
  now = new Date(),
): Promise<string> {
  const jwt = new SignJWT({ accounts: claims.accounts })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(claims.expires.getTime() / 1000));
  if (claims.subject) jwt.setSubject(claims.subject);
  return jwt.sign(privateKey);
}

/** The key for display: first 12 and last 6 characters around `...` (the full key is a secret). */
export function maskLicenseKey(key: string): string {
  return key.length <= 24 ? '...' : `${key.slice(0, 12)}...${key.slice(-6)}`;
}
