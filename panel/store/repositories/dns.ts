// Prepared-statement access to `dns_settings`: the resolver's switch, forwarders and cache TTL cap (one row).
import type { Db } from '../db.ts';

/** The stored resolver settings. */
export interface DnsSettings {
  enabled: boolean;
  forwarders_1: string;
  /** '' when there is no second forwarder. */
  forwarders_2: string;
  /** Seconds, 30-3600. */
  max_cache_ttl: number;
}

interface Row {
  enabled: number;
  forwarders_1: string;
  forwarders_2: string;
  max_cache_ttl: number;
}

/** Repository of the DNS resolver settings. */
export class DnsRepository {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[], Row>('SELECT enabled, forwarders_1, forwarders_2, max_cache_ttl FROM dns_settings WHERE id = 1');
    this.putStmt = db.prepare<[number, string, string, number, string]>(
      `INSERT INTO dns_settings (id, enabled, forwarders_1, forwarders_2, max_cache_ttl, updated_at) VALUES (1, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET enabled = excluded.enabled, forwarders_1 = excluded.forwarders_1,
         forwarders_2 = excluded.forwarders_2, max_cache_ttl = excluded.max_cache_ttl, updated_at = excluded.updated_at`,
    );
  }

  get(): DnsSettings {
    const row = this.getStmt.get() ?? { enabled: 0, forwarders_1: '1.1.1.1', forwarders_2: '8.8.8.8', max_cache_ttl: 3600 };
    return { enabled: row.enabled === 1, forwarders_1: row.forwarders_1, forwarders_2: row.forwarders_2, max_cache_ttl: row.max_cache_ttl };
  }

  put(settings: DnsSettings, now: Date): void {
    this.putStmt.run(settings.enabled ? 1 : 0, settings.forwarders_1, settings.forwarders_2, settings.max_cache_ttl, now.toISOString());
  }
}
