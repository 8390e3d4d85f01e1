// One pooled PanelClient per registered panel location, rebuilt when the panel's URL or access hash changes.
import { createHash } from 'node:crypto';
import { AddressPool } from './address-pool.ts';
import { PanelClient, type PanelClientOptions } from './panel-client.ts';

/** Where the platform keeps its panels (implemented by the platform's panel repository). */
export interface PanelDirectory {
  /** URL and opened access hash of the panel at `location`, or null when none is registered there. */
  connection(location: string): { api_url: string; access_hash: string } | null;
  /** Every registered location. */
  locations(): string[];
}

export const UNKNOWN_PANEL = (location: string) => `no panel registered at location '${location}'`;

/** Caches clients by location; `close()` ends every pool. */
export class PanelRegistry {
  /** Free-address cache shared by every job of this process. */
  readonly addresses = new AddressPool();
  private readonly clients = new Map<string, { fingerprint: string; client: PanelClient; checkedAt: number }>();

  constructor(private readonly directory: PanelDirectory, private readonly clientOptions: Partial<PanelClientOptions> = {}, private readonly recheckMs = 5_000) {}

  /** Registered panel locations. */
  locations(): string[] {
    return this.directory.locations();
  }

  /** The client of the panel at `location`; throws `no panel registered at location ...` when there is none. */
  client(location: string): PanelClient {
    const cached = this.clients.get(location);
    const now = Date.now();
    if (cached && now - cached.checkedAt < this.recheckMs) return cached.client;
    const conn = this.directory.connection(location);
    if (!conn) throw new Error(UNKNOWN_PANEL(location));
    const fingerprint = createHash('sha256').update(`${conn.api_url}\n${conn.access_hash}`).digest('hex');
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
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map((entry) => entry.client.close()));
  }
}
