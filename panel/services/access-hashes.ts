// API access hashes: 40 random bytes shown once as 80 hex chars, stored as SHA-256, bound to one client IP.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalIp, sameIp } from '../schemas/ip.ts';
import type { AccessHashRepository, AccessHashRow } from '../store/repositories/access-hashes.ts';

/** Random bytes in a hash; its text is twice as many hex characters. */
export const ACCESS_HASH_BYTES = 40;
const HASH_PATTERN = /^[0-9a-f]{80}$/;

/** What may be listed about a hash (never the hash, never its digest). */
export interface AccessHashInfo {
  id: number;
  ip: string;
  comment: string;
  created_at: string;
}

/** SHA-256 of a hash text as 32 bytes. */
export function hashDigest(hash: string): Buffer {
  return createHash('sha256').update(hash, 'utf8').digest();
}

/**
 * Creates, lists, deletes and verifies access hashes. Verification uses an in-memory copy of the (small) table,
 * re-read whenever SQLite's data_version shows a commit by another connection (the CLI), so changes count at once.
 */
export class AccessHashService {
  private byDigest = new Map<string, AccessHashRow>();
  private loadedVersion: number | null = null;

  constructor(
    private readonly repo: AccessHashRepository,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Creates a hash bound to `ip`; the returned `hash` is the only time the value exists outside the client. */
  create(ip: string, comment = ''): AccessHashInfo & { hash: string } {
    const bound = canonicalIp(ip);
    if (!bound) throw new Error(`not an IP address: ${ip}`);
    const hash = randomBytes(ACCESS_HASH_BYTES).toString('hex');
    const createdAt = this.clock().toISOString();
    const id = this.repo.insert(hashDigest(hash).toString('hex'), bound, comment, createdAt);
    this.loadedVersion = null;
    return { id, hash, ip: bound, comment, created_at: createdAt };
  }

  list(): AccessHashInfo[] {
    return this.repo.list().map(({ id, ip, comment, created_at }) => ({ id, ip, comment, created_at }));
  }

  /** Deletes a hash by id; true when it existed. */
  delete(id: number): boolean {
    this.loadedVersion = null;
    return this.repo.delete(id);
  }

  /** The rows keyed by digest, re-read when this process changed them or another connection committed. */
  private rows(): Map<string, AccessHashRow> {
    const version = this.repo.dataVersion();
    if (version !== this.loadedVersion) {
      this.byDigest = new Map(this.repo.list().map((row) => [row.digest, row]));
      this.loadedVersion = version;
    }
    return this.byDigest;
  }

  /**
   * True when `hash` is a stored hash bound to `clientAddress`. The row is found by digest, the digests are then
   * compared with `timingSafeEqual`, and the bound IP must equal the client's (`::ffff:a.b.c.d` equals `a.b.c.d`).
   */
  verify(hash: string | undefined, clientAddress: string | null): boolean {
    if (!hash || !clientAddress) return false;
    const normalized = hash.toLowerCase();
    if (!HASH_PATTERN.test(normalized)) return false;
    const digest = hashDigest(normalized);
    const row = this.rows().get(digest.toString('hex'));
    if (!row) return false;
    const stored = Buffer.from(row.digest, 'hex');
    if (stored.length !== digest.length || !timingSafeEqual(stored, digest)) return false;
    return sameIp(row.ip, clientAddress);
  }
}
