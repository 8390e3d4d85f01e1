// Login throttling of the web host: after 5 failed logins for one e-mail address or from one client IP within 15 minutes,
// every login of that address or IP is refused for 15 minutes (admin and customer logins counted apart). Kept in memory:
// a restart forgets the counts, and each platform process counts its own logins.
import type { Clock } from '../../../panel/shared/clock.ts';

export interface LoginThrottlePolicy {
  /** Failures within `windowMs` that lock the e-mail address or IP. */
  maxFailures: number;
  windowMs: number;
  /** How long a locked e-mail address or IP is refused. */
  lockMs: number;
  /** Keys remembered at most (oldest dropped first), so a flood of addresses cannot grow memory without bound. */
  maxKeys: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000, maxKeys: 50_000 };

export type LoginScope = 'admin' | 'customer';

interface Entry {
  /** Times (ms) of the failures inside the window. */
  failures: number[];
  lockedUntil: number;
}

/** Counts failed logins per e-mail address and per client IP; `isLocked` is asked before the password is checked. */
export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: Clock, private readonly policy: LoginThrottlePolicy = DEFAULT_LOGIN_THROTTLE) {}

  private keys(scope: LoginScope, email: string, ip: string | undefined): string[] {
    const keys = [`${scope}|email|${email.trim().toLowerCase()}`];
    if (ip) keys.push(`${scope}|ip|${ip}`);
    return keys;
  }

  /** True while the address or the IP is locked: the login is refused without looking at the password. */
  isLocked(scope: LoginScope, email: string, ip: string | undefined): boolean {
    const now = this.clock.now().getTime();
    return this.keys(scope, email, ip).some((key) => (this.entries.get(key)?.lockedUntil ?? 0) > now);
  }

  /** Records a failed login; the address or IP reaching `maxFailures` within the window is locked for `lockMs`. */
  failed(scope: LoginScope, email: string, ip: string | undefined): void {
    const now = this.clock.now().getTime();
    for (const key of this.keys(scope, email, ip)) {
      const entry = this.entries.get(key) ?? { failures: [], lockedUntil: 0 };
      entry.failures = entry.failures.filter((at) => at > now - this.policy.windowMs);
      entry.failures.push(now);
      if (entry.failures.length >= this.policy.maxFailures) {
        entry.lockedUntil = now + this.policy.lockMs;
        entry.failures = [];
      }
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    this.trim();
  }

  /** A successful login clears the address's failures (never the IP's: one own account must not reset a guesser's count). */
  succeeded(scope: LoginScope, email: string): void {
    this.entries.delete(this.keys(scope, email, undefined)[0]);
  }

  private trim(): void {
    if (this.entries.size <= this.policy.maxKeys) return;
    const now = this.clock.now().getTime();
    for (const [key, entry] of this.entries) {
      if (entry.lockedUntil <= now && entry.failures.every((at) => at <= now - this.policy.windowMs)) this.entries.delete(key);
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.policy.maxKeys) break;
      this.entries.delete(key);
    }
  }
}
