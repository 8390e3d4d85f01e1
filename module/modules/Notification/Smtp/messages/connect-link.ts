// The one-time link of a VpnProduct account: asked of the panel holding it (`GET /account/<name>/otl`) through
// VpnProduct's panel store and panel client; null when the panel does not offer links or cannot be reached.
import type Database from 'better-sqlite3';
import { z } from 'zod';
import type { Clock } from '../../../../../panel/shared/clock.ts';
import type { Sealer } from '../../../../platform/extension.ts';
import { PanelClient } from '../../../Product/VpnProduct/panel-client.ts';
import { PanelStore } from '../../../Product/VpnProduct/panel-store.ts';

/** Issues a one-time link for an account; `panel` is the panel's key (its name, or its location on older data). */
export interface ConnectLinks {
  /** A fresh link (`{base_url}/otl/<key>`), or null with the reason when none can be had. */
  link(panel: string, accountName: string, signal?: AbortSignal): Promise<{ url: string } | { url: null; reason: string }>;
}

const linkSchema = z.url({ protocol: /^https?$/ }).refine((url) => /\/otl\/[A-Za-z0-9_-]+$/.test(url), 'not a one-time link');

/** Over VpnProduct's panels table (platform process, VpnProduct loaded); one short-lived client per link. */
export class PanelConnectLinks implements ConnectLinks {
  private store: PanelStore | null = null;

  constructor(private readonly db: Database.Database, private readonly sealer: Sealer, private readonly clock: Clock, private readonly timeoutMs = 10_000) {}

  async link(panel: string, accountName: string, signal?: AbortSignal): Promise<{ url: string } | { url: null; reason: string }> {
    let connection;
    try {
      this.store ??= new PanelStore(this.db, this.sealer, this.clock);
      connection = this.store.connection(panel);
    } catch (error) {
      return { url: null, reason: `no VpnProduct panel store: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (!connection) return { url: null, reason: `no panel registered as ${panel}` };
    const client = new PanelClient({ apiUrl: connection.api_url, accessHash: connection.access_hash, connections: 1, headersTimeoutMs: this.timeoutMs, bodyTimeoutMs: this.timeoutMs });
    try {
      return { url: await client.call('GET', `/account/${encodeURIComponent(accountName)}/otl`, linkSchema, undefined, signal) };
    } catch (error) {
      return { url: null, reason: error instanceof Error ? error.message : String(error) };
    } finally {
      await client.close();
    }
  }
}
