// Customer accounts of the client area: login, admin-made accounts, password reset by a signed token (single use:
// it is bound to the current password hash); a new password ends every session of the customer.
import { createHash } from 'node:crypto';
import type { Clock } from '../../../../shared/clock.ts';
import { HttpError } from '../../errors.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../../services/passwords.ts';
import type { QueryStore } from '../../store/query/query-store.ts';
import { CustomerQueries, type Customer } from '../../store/query/repositories/customers.ts';
import type { SessionStore } from '../../services/sessions.ts';
import type { TokenSigner } from '../signed-tokens.ts';

/** A logged-in customer. */
export interface CustomerSession {
  uuid: string;
  email: string;
  name: string;
}

/** How long a password reset link works. */
const RESET_TTL_MS = 60 * 60_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface ResetClaims {
  c: string;
  exp: number;
  /** Fingerprint of the password hash the token was made for: a changed password voids it. */
  f: string;
}

/** Customer accounts over the query layer (asynchronous; every platform process sees a new password at once). */
export class CustomerAccounts {
  /** The `customers` table over the query layer. */
  readonly queries: CustomerQueries;
  constructor(private readonly store: QueryStore, private readonly signer: TokenSigner, private readonly sessions: SessionStore, private readonly clock: Clock) {
    this.queries = new CustomerQueries(store, clock);
  }

  /** Creates a customer with a password; 422 for a bad address, a short password or a taken address. */
  async create(input: { email: string; name?: string; password: string }): Promise<Customer> {
    const email = input.email.trim();
    if (!EMAIL.test(email) || email.length > 200) throw new HttpError(422, 'a valid e-mail address is required');
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const taken = new HttpError(422, `a customer with the address ${email} exists`);
    if (await this.queries.findByEmail(email)) throw taken;
    const created = await this.queries.createIfFree({ email, name: input.name?.trim() ?? '', password_hash: await hashPassword(input.password) });
    if (!created) throw taken;
    return created;
  }

  /** The customer when address and password match. */
  async authenticate(email: string, password: string): Promise<CustomerSession | null> {
    const row = await this.queries.findByEmail(email.trim());
    const ok = await verifyPassword(password, row?.password_hash);
    if (!ok || !row) return null;
    return { uuid: row.uuid, email: row.email, name: row.name };
  }

  /** The customer of a session, or null when the account is gone. */
  async session(uuid: string): Promise<CustomerSession | null> {
    const row = await this.store.db.selectFrom('customers').select(['uuid', 'email', 'name']).where('uuid', '=', uuid).executeTakeFirst();
    return row ?? null;
  }

  /** Sets a new password and ends every session of the customer. */
  async setPassword(uuid: string, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new HttpError(422, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`);
    const hash = await hashPassword(password);
    await this.store.transaction(async (tx) => {
      await tx.db.updateTable('customers').set({ password_hash: hash, updated_at: this.clock.now().toISOString() }).where('uuid', '=', uuid).execute();
      await this.sessions.within(tx).endAll('customer', uuid);
    });
  }

  /** A reset token for the customer of `email` (null when unknown), valid RESET_TTL_MS and until the password changes. */
  async resetToken(email: string): Promise<{ token: string; customer: Customer; expires_at: string } | null> {
    const row = await this.queries.findByEmail(email.trim());
    if (!row) return null;
    const exp = this.clock.now().getTime() + RESET_TTL_MS;
    const token = this.signer.sign('password-reset', { c: row.uuid, exp, f: fingerprint(row.password_hash) } satisfies ResetClaims);
    const { password_hash: _hidden, ...customer } = row;
    return { token, customer, expires_at: new Date(exp).toISOString() };
  }

  /** The customer uuid a reset token is good for right now, else null (bad MAC, expired, already used). */
  async checkResetToken(token: string): Promise<string | null> {
    const claims = this.signer.verify<ResetClaims>('password-reset', token);
    if (!claims || typeof claims.c !== 'string' || typeof claims.exp !== 'number') return null;
    if (claims.exp <= this.clock.now().getTime()) return null;
    const row = await this.queries.get(claims.c);
    return row && fingerprint(row.password_hash) === claims.f ? row.uuid : null;
  }

  /** Uses a reset token: sets the password (which voids the token) and answers the customer uuid, or null. */
  async resetPassword(token: string, password: string): Promise<string | null> {
    const uuid = await this.checkResetToken(token);
    if (!uuid) return null;
    await this.setPassword(uuid, password);
    return uuid;
  }
}

function fingerprint(hash: string | null): string {
  return createHash('sha256').update(hash ?? 'no-password').digest('base64url').slice(0, 22);
}
