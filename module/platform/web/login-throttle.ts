// Login throttling of the web host: after 5 failed logins for one e-mail address or from one client IP within 15 minutes,
// every login of that address or IP is refused for 15 minutes (admin and customer logins counted apart). The counts
// live in the store (`login_failures`, `login_locks`, scope `sessions`), so every platform process behind a proxy counts
// the same failures and honours the same locks, and a restart forgets nothing.
import type { Clock } from '../../../shared/clock.ts';
import type { QueryStore } from '../store/query/query-store.ts';

export interface LoginThrottlePolicy {
  /** Failures within `windowMs` that lock the e-mail address or IP. */
  maxFailures: number;
  windowMs: number;
  /** How long a locked e-mail address or IP is refused. */
  lockMs: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

export type LoginScope = 'admin' | 'customer';

/** Counts failed logins per e-mail address and per client IP; `isLocked` is asked before the password is checked. */
export class LoginThrottle {
  constructor(private readonly store: QueryStore, private readonly clock: Clock, private readonly policy: LoginThrottlePolicy = DEFAULT_LOGIN_THROTTLE) {}

  private keys(scope: LoginScope, email: string, ip: string | undefined): string[] {
    const keys = [`${scope}|email|${email.trim().toLowerCase()}`];
    if (ip) keys.push(`${scope}|ip|${ip}`);
    return keys;
  }

  /** True while the address or the IP is locked: the login is refused without looking at the password. */
  async isLocked(scope: LoginScope, email: string, ip: string | undefined): Promise<boolean> {
    const now = this.clock.now().getTime();
    const row = await this.store.db.selectFrom('login_locks').select('key')
      .where('key', 'in', this.keys(scope, email, ip)).where('locked_until', '>', now).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Records a failed login; the address or IP reaching `maxFailures` within the window (counted over every process) is
   * locked for `lockMs` and its count starts again. Failures older than the window are dropped on the way.
   */
  async failed(scope: LoginScope, email: string, ip: string | undefined): Promise<void> {
    const now = this.clock.now().getTime();
    const since = now - this.policy.windowMs;
    const keys = this.keys(scope, email, ip);
    await this.store.db.deleteFrom('login_failures').where('at', '<=', since).execute();
    await this.store.db.deleteFrom('login_locks').where('locked_until', '<=', now).execute();
    await this.store.db.insertInto('login_failures').values(keys.map((key) => ({ key, at: now }))).execute();
    for (const key of keys) {
      const { count } = await this.store.db.selectFrom('login_failures').select((eb) => eb.fn.countAll<number>().as('count'))
        .where('key', '=', key).where('at', '>', since).executeTakeFirstOrThrow();
      if (Number(count) < this.policy.maxFailures) continue;
      // Locking twice (two processes counting the same fifth failure) only sets the same end again.
      await this.store.transaction(async (tx) => {
        await tx.db.insertInto('login_locks').values({ key, locked_until: now + this.policy.lockMs })
          .onConflict((oc) => oc.column('key').doUpdateSet({ locked_until: now + this.policy.lockMs })).execute();
        await tx.db.deleteFrom('login_failures').where('key', '=', key).where('at', '<=', now).execute();
      });
    }
  }

  /** A successful login clears the address's failures (never the IP's: one own account must not reset a guesser's count). */
  async succeeded(scope: LoginScope, email: string): Promise<void> {
    const [key] = this.keys(scope, email, undefined);
    await this.store.db.deleteFrom('login_failures').where('key', '=', key).execute();
    await this.store.db.deleteFrom('login_locks').where('key', '=', key).execute();
  }
}
