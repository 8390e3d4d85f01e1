// Fleet-aware placement: of the panels serving a location, the one with the most free accounts (license limit minus
// accounts, from GET /system/status) that is up; statuses are cached briefly and a pick counts against its panel.
import type { Clock } from '../../../../shared/clock.ts';
import type { SystemStatus } from './wire-schemas.ts';

/** What placement knows of one panel: its status, or null with the reason when it could not be read (down). */
export interface PanelCandidate {
  name: string;
  status: SystemStatus | null;
  error?: string;
}

export const NO_PANEL_AT = (location: string) => `no panel registered at location '${location}'`;
const NO_PANEL_UP = (location: string, reasons: string) => `no panel at location '${location}' is up (${reasons})`;
export const NO_FREE_ACCOUNT = (location: string) => `no panel at location '${location}' has a free account`;

/** True when the panel answered and its data plane is not reporting an error (`status` starting with `Error:`). */
function isPanelUp(candidate: PanelCandidate): candidate is PanelCandidate & { status: SystemStatus } {
  return candidate.status !== null && !candidate.status.status.startsWith('Error');
}

/**
 * The panel to place a new account on: among the panels that are up, the one with the most free accounts
 * (`count_accounts_available`), ties broken by name; never a down or full panel. Throws a text naming why none fits.
 */
export function choosePanel(location: string, candidates: readonly PanelCandidate[]): string {
  if (candidates.length === 0) throw new Error(NO_PANEL_AT(location));
  const up = candidates.filter(isPanelUp);
  if (up.length === 0) {
    throw new Error(NO_PANEL_UP(location, candidates.map((c) => `${c.name}: ${c.error ?? c.status?.status ?? 'down'}`).join('; ')));
  }
  const free = up.filter((c) => c.status.count_accounts_available > 0);
  if (free.length === 0) throw new Error(NO_FREE_ACCOUNT(location));
  free.sort((a, b) => b.status.count_accounts_available - a.status.count_accounts_available || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return free[0].name;
}

/** Where placement reads the fleet from (the PanelRegistry). */
export interface PlacementSource {
  panelsAt(location: string): Promise<string[]>;
  status(name: string, signal?: AbortSignal): Promise<SystemStatus>;
}

/** Places accounts across the panels of a location; one instance per process (its status cache is shared by jobs). */
export class Placement {
  private readonly statuses = new Map<string, { at: number; candidate: PanelCandidate }>();

  /**
   * @param cacheMs how long a panel's status is reused (a burst of createJobs reads each panel once)
   * @param timeoutMs how long a status read may take before the panel counts as down
   */
  constructor(private readonly source: PlacementSource, private readonly clock: Clock, private readonly cacheMs = 3_000, private readonly timeoutMs = 5_000) {}

  /** Chooses the panel for a new account at `location` and counts the account against it in the cache. */
  async choose(location: string, signal?: AbortSignal): Promise<string> {
    const names = await this.source.panelsAt(location);
    const candidates = await Promise.all(names.map((name) => this.candidate(name, signal)));
    const chosen = choosePanel(location, candidates);
    const status = candidates.find((c) => c.name === chosen)!.status!;
    status.count_accounts_available -= 1;
    status.count_accounts += 1;
    return chosen;
  }

  /** Forgets cached statuses (e.g. after the admin changed the fleet). */
  forget(): void {
    this.statuses.clear();
  }

  private async candidate(name: string, signal?: AbortSignal): Promise<PanelCandidate> {
    const now = this.clock.now().getTime();
    const cached = this.statuses.get(name);
    if (cached && now - cached.at < this.cacheMs) return cached.candidate;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let candidate: PanelCandidate;
    try {
      candidate = { name, status: { ...(await this.source.status(name, signal ? AbortSignal.any([signal, timeout]) : timeout)) } };
    } catch (error) {
      if (signal?.aborted) throw error;
      candidate = { name, status: null, error: error instanceof Error ? error.message : String(error) };
    }
    this.statuses.set(name, { at: now, candidate });
    return candidate;
  }
}
