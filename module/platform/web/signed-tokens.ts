// Short signed tokens of the web host (HMAC-SHA256 under one 32-byte key): the one-shot notice cookie and the password
// reset link. Sessions are not tokens: they are server-side records (../services/sessions.ts).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Signs and checks `<payload>.<mac>` tokens; the MAC covers the purpose too, so a token of one purpose is refused by another. */
export class TokenSigner {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('signing key must hold at least 32 bytes');
  }

  /** `<payload>.<mac>` in base64url. */
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
