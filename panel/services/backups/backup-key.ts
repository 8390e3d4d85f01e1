// The data key wrapped by an operator's backup passphrase (scrypt + AES-256-GCM): what lets a new machine open an archive.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** File in the data directory (and entry in every archive made while it exists). */
export const BACKUP_KEY_FILE = 'backup-key.json';
/** The data key file SecretBox.open reads. */
export const DATA_KEY_FILE = 'secret.key';
/** Shortest passphrase accepted. */
export const MIN_PASSPHRASE_LENGTH = 12;

const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;

/** `backup-key.json`: the 32-byte data key sealed under scrypt(passphrase, salt). */
export const wrappedKeySchema = z.object({
  format: z.literal('vpnhost-backup-key'),
  version: z.literal(1),
  kdf: z.literal('scrypt'),
  N: z.number().int().min(2 ** 14).max(2 ** 20),
  r: z.number().int().min(1).max(32),
  p: z.number().int().min(1).max(16),
  salt: z.string(),
  iv: z.string(),
  tag: z.string(),
  wrapped: z.string(),
});
export type WrappedKey = z.infer<typeof wrappedKeySchema>;

function derive(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Buffer {
  return scryptSync(passphrase.normalize('NFC'), salt, 32, { ...params, maxmem: 256 * params.N * params.r });
}

/** Wraps `dataKey` (32 bytes) under `passphrase`. */
export function wrapDataKey(dataKey: Buffer, passphrase: string): WrappedKey {
  if (dataKey.length !== 32) throw new Error('the data key must be 32 bytes');
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) throw new Error(`the passphrase must have at least ${MIN_PASSPHRASE_LENGTH} characters`);
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derive(passphrase, salt, SCRYPT), iv);
  cipher.setAAD(Buffer.from('vpnhost-backup-key/1'));
  const wrapped = Buffer.concat([cipher.update(dataKey), cipher.final()]);
  return {
    format: 'vpnhost-backup-key', version: 1, kdf: 'scrypt', ...SCRYPT, salt: salt.toString('base64'), iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'), wrapped: wrapped.toString('base64'),
  };
}

/** The data key inside `wrapped`; throws `wrong passphrase` when it does not open. */
export function unwrapDataKey(wrapped: WrappedKey, passphrase: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', derive(passphrase, Buffer.from(wrapped.salt, 'base64'), wrapped), Buffer.from(wrapped.iv, 'base64'));
  decipher.setAAD(Buffer.from('vpnhost-backup-key/1'));
  decipher.setAuthTag(Buffer.from(wrapped.tag, 'base64'));
  try {
    const key = Buffer.concat([decipher.update(Buffer.from(wrapped.wrapped, 'base64')), decipher.final()]);
    if (key.length !== 32) throw new Error('bad length');
    return key;
  } catch {
    throw new Error('wrong passphrase (the backup key does not open)');
  }
}

/** The wrapped key file of a data directory as text, or null when no passphrase was set. */
export function readWrappedKeyFile(dataDir: string): string | null {
  try {
    return readFileSync(join(dataDir, BACKUP_KEY_FILE), 'utf8');
  } catch {
    return null;
  }
}
