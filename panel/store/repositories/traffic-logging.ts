// Prepared-statement access to `traffic_logging`: the traffic logging settings (one row, the TSDB token sealed).
import { TRAFFIC_LOGGING_FLAGS, type TrafficLoggingFlag } from '../../schemas/traffic-logging.ts';
import type { Db } from '../db.ts';

/** The stored settings; `tsdb_token_sealed` is the SecretBox value ('' when unset). */
export interface StoredTrafficLogging {
  enabled: boolean;
  enabled_tsdb: boolean;
  enabled_remote_syslog: boolean;
  flags: Record<TrafficLoggingFlag, boolean>;
  tsdb_url: string;
  tsdb_organization: string;
  tsdb_bucket: string;
  tsdb_token_sealed: string;
  remote_syslog_server: string;
  remote_syslog_server_port: number;
}

interface Row {
  enabled: number;
  enabled_tsdb: number;
  enabled_remote_syslog: number;
  flags: string;
  tsdb_url: string;
  tsdb_organization: string;
  tsdb_bucket: string;
  tsdb_token_sealed: string;
  remote_syslog_server: string;
  remote_syslog_server_port: number;
  updated_at: string;
}

/** Flags of a never-changed config: new connections only. */
export const DEFAULT_FLAGS: Readonly<Record<TrafficLoggingFlag, boolean>> = Object.freeze(
  Object.fromEntries(TRAFFIC_LOGGING_FLAGS.map((f) => [f, f === 'new'])) as Record<TrafficLoggingFlag, boolean>,
);

/** One account as the flow attribution needs it: name, IPv4 (as a 32-bit number), IPv6 CIDR, server interface. */
export interface FlowOwnerRow {
  name: string;
  ip: number;
  allowed_ips_ipv6: string | null;
  interface_name: string;
}

/** Repository of the traffic logging settings. */
export class TrafficLoggingRepository {
  private readonly getStmt;
  private readonly putStmt;
  private readonly ownersStmt;

  constructor(db: Db) {
    this.ownersStmt = db.prepare<[], FlowOwnerRow>(
      `SELECT a.name, a.ip, a.allowed_ips_ipv6, s.interface_name
       FROM accounts a JOIN wireguard_servers s ON s.id = a.server_id`,
    );
    this.getStmt = db.prepare<[], Row>('SELECT * FROM traffic_logging WHERE id = 1');
    this.putStmt = db.prepare<[Row]>(
      `INSERT INTO traffic_logging (id, enabled, enabled_tsdb, enabled_remote_syslog, flags, tsdb_url, tsdb_organization,
         tsdb_bucket, tsdb_token_sealed, remote_syslog_server, remote_syslog_server_port, updated_at)
       VALUES (1, @enabled, @enabled_tsdb, @enabled_remote_syslog, @flags, @tsdb_url, @tsdb_organization, @tsdb_bucket,
         @tsdb_token_sealed, @remote_syslog_server, @remote_syslog_server_port, @updated_at)
       ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, enabled_tsdb = excluded.enabled_tsdb,
         enabled_remote_syslog = excluded.enabled_remote_syslog, flags = excluded.flags, tsdb_url = excluded.tsdb_url,
         tsdb_organization = excluded.tsdb_organization, tsdb_bucket = excluded.tsdb_bucket,
         tsdb_token_sealed = excluded.tsdb_token_sealed, remote_syslog_server = excluded.remote_syslog_server,
         remote_syslog_server_port = excluded.remote_syslog_server_port, updated_at = excluded.updated_at`,
    );
  }

  /** The stored settings, or the defaults (everything off, new connections selected, port 514) until changed. */
  get(): StoredTrafficLogging {
    const row = this.getStmt.get();
    const flags = { ...DEFAULT_FLAGS };
    if (!row) {
      return {
        enabled: false, enabled_tsdb: false, enabled_remote_syslog: false, flags, tsdb_url: '', tsdb_organization: '',
        tsdb_bucket: '', tsdb_token_sealed: '', remote_syslog_server: '', remote_syslog_server_port: 514,
      };
    }
    let stored: Record<string, unknown> = {};
    try {
      stored = JSON.parse(row.flags) as Record<string, unknown>;
    } catch {
      stored = {};
    }
    for (const f of TRAFFIC_LOGGING_FLAGS) if (typeof stored[f] === 'boolean') flags[f] = stored[f] as boolean;
    return {
      enabled: row.enabled === 1,
      enabled_tsdb: row.enabled_tsdb === 1,
      enabled_remote_syslog: row.enabled_remote_syslog === 1,
      flags,
      tsdb_url: row.tsdb_url,
      tsdb_organization: row.tsdb_organization,
      tsdb_bucket: row.tsdb_bucket,
      tsdb_token_sealed: row.tsdb_token_sealed,
      remote_syslog_server: row.remote_syslog_server,
      remote_syslog_server_port: row.remote_syslog_server_port,
    };
  }

  /** Every account with its addresses and server interface (the flow attribution's index, rebuilt now and then). */
  flowOwners(): FlowOwnerRow[] {
    return this.ownersStmt.all();
  }

  set(value: StoredTrafficLogging, now: Date): void {
    this.putStmt.run({
      enabled: value.enabled ? 1 : 0,
      enabled_tsdb: value.enabled_tsdb ? 1 : 0,
      enabled_remote_syslog: value.enabled_remote_syslog ? 1 : 0,
      flags: JSON.stringify(value.flags),
      tsdb_url: value.tsdb_url,
      tsdb_organization: value.tsdb_organization,
      tsdb_bucket: value.tsdb_bucket,
      tsdb_token_sealed: value.tsdb_token_sealed,
      remote_syslog_server: value.remote_syslog_server,
      remote_syslog_server_port: value.remote_syslog_server_port,
      updated_at: now.toISOString(),
    });
  }
}
