// The installed license: account limit (free tier without a valid key), GET /license, and installing a key.
import { type Clock, systemClock } from '../../shared/clock.ts';
import type { KeyObject } from 'node:crypto';
import { ApiError, E } from '../http/errors.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import { FREE_TIER_ACCOUNTS, type License, type LicenseClaims } from '../schemas/license.ts';
import type { LicenseRepository } from '../store/repositories/license.ts';
import { securityEvent, type SecurityLog } from '../logger.ts';
import { isoWithOffset } from './iso-time.ts';
import { LICENSE_PROBLEM_TEXT, maskLicenseKey, verifyLicenseKey, type LicenseProblem } from './license-key.ts';

/** Thrown by `install` when a key is refused; the message never contains the key. */
export class LicenseInstallError extends Error {
  constructor(readonly problem: LicenseProblem) {
    super(LICENSE_PROBLEM_TEXT[problem]);
    this.name = 'LicenseInstallError';
  }
}

interface Verified {
  sealed: string;
  key: string;
  claims: LicenseClaims | null;
  signatureOk: boolean;
}

/** Current license evaluation: valid with claims, or not. */
export interface LicenseState {
  valid: boolean;
  claims: LicenseClaims | null;
}

/**
 * Reads the license from SQLite on every call (so a key installed by the CLI counts at once); the signature of a
 * given stored key is verified once and cached, expiry is checked against the clock on every call.
 */
/** Collaborators of {@link LicenseService}. */
export interface LicenseServiceDeps {
  repo: LicenseRepository;
  secretBox: SecretBox;
  /** The vendor key that signs licenses; null: only the free tier. */
  publicKey: KeyObject | null;
  /** Default the wall clock (`systemClock`). */
  clock?: Clock;
  log?: SecurityLog;
}

export class LicenseService {
  private cache: Verified | null = null;
  /** The sealed key last seen (null: none installed; undefined: not read yet), to log a key changed by another process. */
  private seenSealed: string | null | undefined = undefined;

  /** `log` receives a security event, written at once, whenever the installed key changes (here or from elsewhere). */
  constructor(private readonly deps: LicenseServiceDeps) {}

  private now(): Date {
    return (this.deps.clock ?? systemClock).now();
  }

  /** Account limit: the valid license's `accounts`, else the free tier (50). */
  accountLimit(): number {
    const state = this.state();
    return state.valid && state.claims ? state.claims.accounts : FREE_TIER_ACCOUNTS;
  }

  /** Whether a valid license is installed, with its claims. */
  state(): LicenseState {
    const verified = this.load();
    if (!verified || !verified.signatureOk || !verified.claims) return { valid: false, claims: null };
    const valid = verified.claims.exp * 1000 > this.now().getTime();
    return { valid, claims: valid ? verified.claims : null };
  }

  /** Expiry of the valid license, or null on the free tier. */
  expiry(): Date | null {
    const { claims } = this.state();
    return claims ? new Date(claims.exp * 1000) : null;
  }

  /**
   * GET /license: re-verifies the stored key (recording `last_check`) and returns the License with the key masked.
   * Throws `The license is not active` when there is no valid license.
   */
  status(): License {
    this.cache = null;
    const state = this.state();
    const key = this.load()?.key ?? '';
    const row = this.deps.repo.get();
    if (!state.valid || !state.claims || !row) throw new ApiError(E.LICENSE_NOT_ACTIVE);
    return {
      accounts: state.claims.accounts,
      expiration_date: isoWithOffset(new Date(state.claims.exp * 1000)),
      key: maskLicenseKey(key),
      last_check: row.last_check ? isoWithOffset(new Date(row.last_check)) : '',
      valid: true,
    };
  }

  /** Verifies and stores a key (sealed). Throws LicenseInstallError when malformed, foreign or expired. */
  install(key: string): LicenseClaims {
    const trimmed = key.trim();
    const verdict = verifyLicenseKey(trimmed, this.deps.publicKey, this.now());
    if (!verdict.ok) throw new LicenseInstallError(verdict.problem);
    const now = this.now().toISOString();
    const sealed = this.deps.secretBox.seal(trimmed);
    this.deps.repo.put(sealed, now, now);
    this.cache = { sealed, key: trimmed, claims: verdict.claims, signatureOk: true };
    this.seenSealed = sealed;
    securityEvent(this.deps.log, { event: 'license_changed', accounts: verdict.claims.accounts, expires: new Date(verdict.claims.exp * 1000).toISOString() }, 'license installed');
    return verdict.claims;
  }

  private load(): Verified | null {
    const row = this.deps.repo.get();
    const changed = this.seenSealed !== undefined && this.seenSealed !== (row?.key_sealed ?? null);
    this.seenSealed = row?.key_sealed ?? null;
    if (!row) {
      this.cache = null;
      if (changed) securityEvent(this.deps.log, { event: 'license_changed', source: 'other process', accounts: null }, 'license removed');
      return null;
    }
    if (this.cache && this.cache.sealed === row.key_sealed) return this.cache;
    let key: string;
    try {
      key = this.deps.secretBox.open(row.key_sealed);
    } catch {
      this.cache = { sealed: row.key_sealed, key: '', claims: null, signatureOk: false };
      if (changed) securityEvent(this.deps.log, { event: 'license_changed', source: 'other process', valid: false }, 'license installed');
      return this.cache;
    }
    const verdict = verifyLicenseKey(key, this.deps.publicKey, this.now());
    const signatureOk = verdict.ok || verdict.problem === 'expired';
    this.cache = { sealed: row.key_sealed, key, claims: verdict.claims ?? null, signatureOk };
    if (signatureOk) this.deps.repo.touchLastCheck(row.key_sealed, this.now().toISOString());
    if (changed) {
      const claims = verdict.claims;
      securityEvent(this.deps.log, {
        event: 'license_changed', source: 'other process', valid: signatureOk,
        accounts: claims?.accounts ?? null, expires: claims ? new Date(claims.exp * 1000).toISOString() : null,
      }, 'license installed');
    }
    return this.cache;
  }
}
