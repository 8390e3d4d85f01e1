// System status and reload: real counts, license figures, the status text, and full reconciles (single flight).
import { type Clock, systemClock } from '../../shared/clock.ts';
import type { Driver } from '../dataplane/wireguard/driver.ts';
import { ApiError, E } from '../http/errors.ts';
import type { SystemStatus } from '../../shared/wire/system.ts';
import { isoWithOffset } from './iso-time.ts';
import type { LicenseService } from './license.ts';
import { ReconcileBusyError, type ReconcileFn, type ReconcilerStatus } from './reconciler-status.ts';

/** What the system service needs. */
export interface SystemServiceDeps {
  /** Number of accounts and of WireGuard servers (O(1) counters of the repositories). */
  countAccounts: () => number;
  countServers: () => number;
  driver: Driver;
  license: LicenseService;
  reconciler: ReconcilerStatus;
  /** Full reconcile of the data plane from the store (`dataplaneSync.reconcileAll`). */
  reconcileAll: ReconcileFn;
  version: string;
  /** Clock of the panel (the free tier's `license` timestamp is its now). */
  clock?: Clock;
  /** Logs reconcile failures (never secrets). */
  onReconcileError?: (err: unknown) => void;
  /** Probes of supervised daemons (IKEv2's charon): a text names one that should run but does not; null = fine. */
  healthChecks?: Array<() => Promise<string | null>>;
}

/** GET /system/status and PUT /system/reload. */
export class SystemService {
  constructor(private readonly deps: SystemServiceDeps) {}

  /**
   * The status text: `Loading (<done>/<total>)` during a full reconcile; `Error: data plane not healthy: <detail>`
   * when the driver's probe fails; `Error: reconcile failed: <message>` after a failed reconcile; else `OK`.
   */
  async statusText(): Promise<string> {
    const busy = this.deps.reconciler.text();
    if (this.deps.reconciler.running && busy) return busy;
    const health = await this.deps.driver.health().catch((err: unknown) => ({ ok: false, detail: (err as Error)?.message }));
    if (!health.ok) return `Error: data plane not healthy: ${health.detail ?? 'unknown'}`;
    for (const check of this.deps.healthChecks ?? []) {
      const problem = await check().catch((err: unknown) => (err as Error)?.message ?? 'unknown');
      if (problem) return `Error: ${problem}`;
    }
    return busy ?? 'OK';
  }

  async status(): Promise<SystemStatus> {
    const accounts = this.deps.countAccounts();
    const limit = this.deps.license.accountLimit();
    const expiry = this.deps.license.expiry();
    return {
      count_accounts: accounts,
      count_accounts_available: Math.max(0, limit - accounts),
      count_wireguard: this.deps.countServers(),
      // Always an ISO 8601 timestamp: the paid term's end, or on the free tier (no paid term) the time of the answer.
      license: isoWithOffset(expiry ?? (this.deps.clock ?? systemClock).now()),
      license_valid: expiry !== null,
      status: await this.statusText(),
      version: this.deps.version,
    };
  }

  /**
   * PUT /system/reload: a full reconcile, answered when done. `CONTROLPANEL status not OK` (409) when a reconcile
   * is already running, when the driver's probe fails, or when the reconcile fails.
   */
  async reload(): Promise<void> {
    if (this.deps.reconciler.running) throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
    const health = await this.deps.driver.health().catch(() => ({ ok: false }));
    if (!health.ok) throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
    try {
      await this.deps.reconciler.run(this.deps.reconcileAll);
    } catch (err) {
      if (!(err instanceof ReconcileBusyError)) this.deps.onReconcileError?.(err);
      throw new ApiError(E.CONTROLPANEL_STATUS_NOT_OK);
    }
  }

  /** The boot reconcile (status shows Loading meanwhile); failures are recorded in the status text, not thrown. */
  async reconcileOnBoot(): Promise<void> {
    try {
      await this.deps.reconciler.run(this.deps.reconcileAll);
    } catch (err) {
      if (!(err instanceof ReconcileBusyError)) this.deps.onReconcileError?.(err);
    }
  }
}
