// Signed session cookies (HMAC-SHA256, no server-side store): who, which session version, when issued, last seen;
// idle and absolute expiry checked on every read, re-issued (rotated) once it is older than `rotateMs`.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../../panel/shared/clock.ts';

/** What a session cookie carries. `k` separates admin and customer sessions; `v` is the account's session version. */
export interface SessionClaims {
  k: 'admin' | 'customer';
  /** Account id (admin id or customer uuid). */
  s: string;
  v: number;
  /** Issued at, ms. */
  iat: number;
  /** Last seen (the last rotation), ms. */
  seen: number;
  /** Random nonce, so two cookies issued in the same millisecond differ. */
  n: string;
}

export interface SessionPolicy {
  /** A session unused this long is over (default 30 min). */
  idleMs: number;
  /** A session is over this long after login, used or not (default 12 h). */
  absoluteMs: number;
  /** A valid cookie older than this (since last seen) is re-issued (default 5 min). */
  rotateMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 12 * 3_600_000, rotateMs: 5 * 60_000 };

/** Signs and checks session cookies and other short signed tokens with one 32-byte key. */
export class SessionCodec {
  constructor(private readonly key: Buffer, private readonly clock: Clock, readonly policy: SessionPolicy = DEFAULT_SESSION_POLICY) {
    if (key.length < 32) throw new Error('session key must hold at least 32 bytes');
  }

  /** A new cookie value for an account that just logged in. */
  issue(kind: SessionClaims['k'], subject: string, version: number): string {
    const now = this.clock.now().getTime();
    return this.sign('session', { k: kind, s: subject, v: version, iat: now, seen: now, n: randomBytes(6).toString('base64url') });
  }

  /**
   * The claims of a valid, unexpired cookie of `kind` (else null) and, when it is due for rotation, the value that
   * replaces it (same login time, new last-seen and nonce).
   */
  read(value: string | undefined, kind: SessionClaims['k']): { claims: SessionClaims; renewed: string | null } | null {
    const claims = this.verify<SessionClaims>('session', value);
    if (!claims || claims.k !== kind || typeof claims.iat !== 'number' || typeof claims.seen !== 'number') return null;
    const now = this.clock.now().getTime();
    if (now - claims.iat >= this.policy.absoluteMs || now - claims.seen >= this.policy.idleMs || claims.seen > now + 60_000) return null;
    const renewed = now - claims.seen >= this.policy.rotateMs ? this.sign('session', { ...claims, seen: now, n: randomBytes(6).toString('base64url') }) : null;
    return { claims, renewed };
  }

  /** `<payload>.<mac>` in base64url; the MAC covers the purpose too, so a token of one purpose is refused by another. */
  sign(purpose: string, payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(purpose, body)}`;
  }

  /** The payload of a token signed for `purpose`, or null (bad shape, bad MAC). */
  verify<T>(purpose: string, token: string | undefined): T | null {
    if (!token || token.length > 4096) return null;
    const dot = token.indexOf('.');
    if (dot <= 0) return null;
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const want = Buffer.from(this.mac(purpose, body), 'base64url');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      return null;
    }
  }

  private mac(purpose: string, body: string): string {
    return createHmac('sha256', this.key).update(purpose).update('\0').update(body).digest('base64url');
  }
}
