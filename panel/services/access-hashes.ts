// API access hashes: 40 random bytes shown once as 80 hex chars, stored as SHA-256, bound to one client IP.
import { type Clock, systemClock } from '../../shared/clock.ts';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalIp, sameIp } from '../schemas/ip.ts';
import type { AccessHashRepository, AccessHashRow } from '../store/repositories/access-hashes.ts';
import { securityEvent, type SecurityLog } from '../logger.ts';

/** Random bytes in a hash; its text is twice as many hex characters. */
const ACCESS_HASH_BYTES = 40;
const HASH_PATTERN = /^[0-9a-f]{80}$/;

/** What may be listed about a hash (never the hash, never its digest). */
export interface AccessHashInfo {
  id: number;
  ip: string;
  comment: string;
  created_at: string;
}

/** SHA-256 of a hash text as 32 bytes. */
function hashDigest(hash: string): Buffer {
  return createHash('sha256').update(hash, 'utf8').digest();
}

/**
 * Creates, lists, deletes and verifies access hashes. Verification uses an in-memory copy of the (small) table,
 * re-read whenever SQLite's data_version shows a commit by another connection (the CLI), so changes count at once.
 */
export class AccessHashService {
  private byDigest = new Map<string, AccessHashRow>();
  private loadedVersion: number | null = null;
  /** Ids and bound addresses as last seen, to log changes made by another connection (the CLI); null before the first read. */
  private seen: Map<number, string> | null = null;

  /** `log` receives a security event, written at once, for every hash created or deleted (here or seen from elsewhere). */
  constructor(
    private readonly repo: AccessHashRepository,
    private readonly clock: Clock = systemClock,
    private readonly log?: SecurityLog,
  ) {}

  /** Creates a hash bound to `ip`; the returned `hash` is the only time the value exists outside the client. */
  create(ip: string, comment = ''): AccessHashInfo & { hash: string } {
    const bound = canonicalIp(ip);
    if (!bound) throw new Error(`not an IP address: ${ip}`);
    const hash = randomBytes(ACCESS_HASH_BYTES).toString('hex');
    const createdAt = this.clock.now().toISOString();
    const id = this.repo.insert(hashDigest(hash).toString('hex'), bound, comment, createdAt);
    this.loadedVersion = null;
    this.seen?.set(id, bound);
    securityEvent(this.log, { event: 'access_hash_created', id, ip: bound }, 'access hash created');
    return { id, hash, ip: bound, comment, created_at: createdAt };
  }

  list(): AccessHashInfo[] {
    return this.repo.list().map(({ id, ip, comment, created_at }) => ({ id, ip, comment, created_at }));
  }

  /** Deletes a hash by id; true when it existed. */
  delete(id: number): boolean {
    this.loadedVersion = null;
    const deleted = this.repo.delete(id);
    if (deleted) {
      this.seen?.delete(id);
      securityEvent(this.log, { event: 'access_hash_deleted', id }, 'access hash deleted');
    }
    return deleted;
  }

  /** The rows keyed by digest, re-read when this process changed them or another connection committed. */
  private rows(): Map<string, AccessHashRow> {
    const version = this.repo.dataVersion();
    if (version !== this.loadedVersion) {
      const rows = this.repo.list();
      this.byDigest = new Map(rows.map((row) => [row.digest, row]));
      this.loadedVersion = version;
      this.noteExternalChanges(rows);
    }
    return this.byDigest;
  }

  /** Logs hashes another connection created or deleted since the last read (the first read only records them). */
  private noteExternalChanges(rows: AccessHashRow[]): void {
    const now = new Map(rows.map((row) => [row.id, row.ip]));
    if (this.seen && this.log) {
      for (const [id, ip] of now) {
        if (!this.seen.has(id)) securityEvent(this.log, { event: 'access_hash_created', id, ip, source: 'other process' }, 'access hash created');
      }
      for (const id of this.seen.keys()) {
        if (!now.has(id)) securityEvent(this.log, { event: 'access_hash_deleted', id, source: 'other process' }, 'access hash deleted');
      }
    }
    this.seen = now;
  }

  /**
   * True when `hash` is a stored hash bound to `clientAddress`. Only the exact form (80 lower-case hex characters)
   * can match. The row is found by digest, the digests are then
   * compared with `timingSafeEqual`, and the bound IP must equal the client's (`::ffff:a.b.c.d` equals `a.b.c.d`).
   */
  verify(hash: string | undefined, clientAddress: string | null): boolean {
    if (!hash || !clientAddress) return false;
    if (!HASH_PATTERN.test(hash)) return false;
    const digest = hashDigest(hash);
    const row = this.rows().get(digest.toString('hex'));
    if (!row) return false;
    const stored = Buffer.from(row.digest, 'hex');
    if (stored.length !== digest.length || !timingSafeEqual(stored, digest)) return false;
    return sameIp(row.ip, clientAddress);
  }
}
