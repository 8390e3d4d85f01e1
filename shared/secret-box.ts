// Secrets at rest: AES-256-GCM under a 32-byte key file created 0600 in the data directory.
// Pure and side-effect free apart from reading/creating the key file, so both the panel and the platform use it.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const PREFIX = 'enc:v1:';
/** How many opened values a box keeps in memory (a sealed value maps to one plain text, so a hit is exact). */
const OPEN_CACHE_SIZE = 20_000;

/** Encrypts and decrypts short secrets (keys, hashes, passwords) for storage. */
export class SecretBox {
  /** Recently opened values (sealed → plain), so hot reads do not decrypt again; bounded, oldest evicted first. */
  private readonly opened = new Map<string, string>();
  /** Keys derived for {@link mac}, by purpose. */
  private readonly macKeys = new Map<string, Buffer>();

  private constructor(private readonly key: Buffer) {}

  /** Opens `<dataDir>/secret.key`, creating it (0600, 32 random bytes) when missing. */
  static open(dataDir: string, fileName = 'secret.key'): SecretBox {
    const path = join(dataDir, fileName);
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, randomBytes(32), { mode: 0o600, flag: 'wx' });
    }
    chmodSync(path, 0o600);
    const key = readFileSync(path);
    if (key.length !== 32) throw new Error(`secret key file ${path} must hold 32 bytes`);
    return new SecretBox(key);
  }

  /** A box with a given key (tests). */
  static fromKey(key: Buffer): SecretBox {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes');
    return new SecretBox(Buffer.from(key));
  }

  /** `enc:v1:<iv>.<tag>.<ciphertext>` in base64url. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${body.toString('base64url')}`;
  }

  /** Reverses `seal`; throws on a tampered or foreign value. */
  open(sealed: string): string {
    const cached = this.opened.get(sealed);
    if (cached !== undefined) return cached;
    const plain = this.decrypt(sealed);
    if (this.opened.size >= OPEN_CACHE_SIZE) this.opened.delete(this.opened.keys().next().value as string);
    this.opened.set(sealed, plain);
    return plain;
  }

  private decrypt(sealed: string): string {
    if (!SecretBox.isSealed(sealed)) throw new Error('value is not sealed');
    const [iv, tag, body] = sealed.slice(PREFIX.length).split('.');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  /**
   * HMAC-SHA256 of `data` under a key derived from the data key for `purpose` (HKDF-SHA256, the purpose as info), so
   * a MAC of one purpose is no MAC of another and the data key itself never signs. Hex.
   */
  mac(purpose: string, data: string | Buffer): string {
    let key = this.macKeys.get(purpose);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `vpnhost-mac/${purpose}`, 32));
      this.macKeys.set(purpose, key);
    }
    return createHmac('sha256', key).update(data).digest('hex');
  }

  /** Whether `tag` is {@link mac} of `data` for `purpose` (compared in constant time). */
  verifyMac(purpose: string, data: string | Buffer, tag: string): boolean {
    const expected = Buffer.from(this.mac(purpose, data), 'hex');
    const given = /^[0-9a-f]{64}$/.test(tag) ? Buffer.from(tag, 'hex') : Buffer.alloc(0);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Whether a stored value was produced by `seal`. */
  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }
}
