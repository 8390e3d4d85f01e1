// One pooled PanelClient per registered panel (by name), rebuilt when the panel's URL or access hash changes.
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../../../shared/clock.ts';
import { AddressPool } from './address-pool.ts';
import { PanelClient, type PanelClientOptions } from './panel-client.ts';

/** URL and opened access hash of one panel. */
export interface PanelConnectionInfo {
  api_url: string;
  access_hash: string;
}

/**
 * Where the platform keeps its panels: VpnProduct's panel table (its module store) or, in a remote worker, the
 * platform's worker API (no `locations`: only the platform validates product data).
 */
export interface PanelDirectory {
  /** URL and opened access hash of the panel named `name`, or null when none is registered under it. */
  connection(name: string): Promise<PanelConnectionInfo | null>;
  /** Names of the panels serving `location` (several panels may serve one location), sorted. */
  panelsAt(location: string): Promise<string[]>;
  /** Every registered location (absent where the list is not known, e.g. a remote worker). */
  locations?(): Promise<string[]>;
}

export const UNKNOWN_PANEL = (location: string) => `no panel registered at location '${location}'`;
export const NO_PANEL_LOCATIONS = 'panel locations are only known where the platform database is (not in a remote worker)';

/** Caches clients by location; `close()` ends every pool. */
export class PanelRegistry {
  /** Free-address cache shared by every job of this process. */
  readonly addresses = new AddressPool();
  private readonly clients = new Map<string, { fingerprint: string; client: PanelClient; checkedAt: number }>();
  /** Lookups under way, so concurrent jobs on one location share a single directory call. */
  private readonly lookups = new Map<string, Promise<PanelClient>>();

  constructor(
    private readonly directory: PanelDirectory,
    private readonly clientOptions: Partial<PanelClientOptions> = {},
    private readonly recheckMs = 5_000,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Registered panel locations. */
  async locations(): Promise<string[]> {
    if (!this.directory.locations) throw new Error(NO_PANEL_LOCATIONS);
    return this.directory.locations();
  }

  /** Names of the panels serving `location`. */
  async panelsAt(location: string): Promise<string[]> {
    return this.directory.panelsAt(location);
  }

  /**
   * The client of the panel named `location` (its connection re-read at most every `recheckMs`; a panel registered
   * without a name is named after its location); rejects with `no panel registered at location ...` when none.
   */
  async client(location: string): Promise<PanelClient> {
    const cached = this.clients.get(location);
    if (cached && this.clock.now().getTime() - cached.checkedAt < this.recheckMs) return cached.client;
    let lookup = this.lookups.get(location);
    if (!lookup) {
      lookup = this.refresh(location).finally(() => this.lookups.delete(location));
      this.lookups.set(location, lookup);
    }
    return lookup;
  }

  private async refresh(location: string): Promise<PanelClient> {
    const conn = await this.directory.connection(location);
    if (!conn) throw new Error(UNKNOWN_PANEL(location));
    const fingerprint = createHash('sha256').update(`${conn.api_url}\n${conn.access_hash}`).digest('hex');
    const now = this.clock.now().getTime();
    const cached = this.clients.get(location);
    if (cached && cached.fingerprint === fingerprint) {
      cached.checkedAt = now;
      return cached.client;
    }
    if (cached) void cached.client.close();
    const client = new PanelClient({ ...this.clientOptions, apiUrl: conn.api_url, accessHash: conn.access_hash });
    this.clients.set(location, { fingerprint, client, checkedAt: now });
    return client;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.lookups.values()]);
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map((entry) => entry.client.close()));
  }
}
