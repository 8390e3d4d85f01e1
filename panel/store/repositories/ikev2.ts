// Prepared-statement access to `ikev2` (one row: enable flag, CA and server certificate with sealed keys, settings).
import { IKEV2_DEFAULTS, type Ikev2AdvancedSettings } from '../../schemas/ikev2.ts';
import type { Db } from '../db.ts';

/** The stored row; `*_key_sealed` are SecretBox values ('' when absent). */
export interface Ikev2Row {
  enabled: boolean;
  ca_cert: string;
  ca_key_sealed: string;
  ca_common_name: string;
  ca_country_name: string;
  ca_locality: string;
  ca_organization: string;
  ca_organizational_unit: string;
  ca_state_or_province_name: string;
  server_cert: string;
  server_key_sealed: string;
  server_common_name: string;
  server_country_name: string;
  server_domain: string;
  server_ip: string;
  server_ipv6: string;
  server_locality: string;
  server_organization: string;
  server_organizational_unit: string;
  server_state_or_province_name: string;
  advanced: Ikev2AdvancedSettings;
  profile_password: boolean;
}

/** The columns that decide whether the IKEv2 daemon runs (`Ikev2Sync.wanted`). */
export type Ikev2DaemonInputs = Pick<Ikev2Row, 'enabled' | 'ca_cert' | 'server_cert' | 'server_key_sealed'>;

type RawRow = Omit<Ikev2Row, 'enabled' | 'advanced' | 'profile_password'> & { enabled: number; advanced: string; profile_password: number };

/** Repository of the IKEv2 settings row (created by migration 007). */
export class Ikev2Repository {
  private readonly getStmt;
  private readonly daemonInputsStmt;
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    this.getStmt = db.prepare<[], RawRow>('SELECT * FROM ikev2 WHERE id = 1');
    this.daemonInputsStmt = db.prepare<[], Omit<Ikev2DaemonInputs, 'enabled'> & { enabled: number }>(
      'SELECT enabled, ca_cert, server_cert, server_key_sealed FROM ikev2 WHERE id = 1');
  }

  /** {@link get}'s columns that decide whether the daemon runs, without the rest and the settings: every account change asks. */
  daemonInputs(): Ikev2DaemonInputs {
    const raw = this.daemonInputsStmt.get()!;
    return { ...raw, enabled: raw.enabled === 1 };
  }

  get(): Ikev2Row {
    const raw = this.getStmt.get()!;
    let advanced: Ikev2AdvancedSettings = { ...IKEV2_DEFAULTS };
    if (raw.advanced) {
      try {
        advanced = { ...IKEV2_DEFAULTS, ...(JSON.parse(raw.advanced) as Partial<Ikev2AdvancedSettings>) };
      } catch {
        // an unreadable value falls back to the defaults
      }
    }
    const { id: _id, updated_at: _u, ...rest } = raw as RawRow & { id: number; updated_at: string };
    return { ...rest, enabled: raw.enabled === 1, advanced, profile_password: raw.profile_password === 1 };
  }

  /** Writes the given columns (keys of {@link Ikev2Row}); `now` stamps `updated_at`. */
  update(change: Partial<Ikev2Row>, now: Date): void {
    const cols: string[] = [];
    const values: Record<string, unknown> = { updated_at: now.toISOString() };
    for (const [key, value] of Object.entries(change)) {
      if (!/^[a-z_0-9]+$/.test(key)) throw new Error(`bad column ${key}`);
      cols.push(`${key} = @${key}`);
      values[key] = key === 'advanced' ? JSON.stringify(value) : typeof value === 'boolean' ? (value ? 1 : 0) : value;
    }
    if (cols.length === 0) return;
    this.db.prepare(`UPDATE ikev2 SET ${cols.join(', ')}, updated_at = @updated_at WHERE id = 1`).run(values);
  }
}

/** Account name by username (IKEv2 SAs carry the EAP identity); one indexed read. */
export function accountNameByUsername(db: Db): (username: string) => string | undefined {
  const stmt = db.prepare<[string], { name: string }>('SELECT name FROM accounts WHERE username = ?');
  return (username) => stmt.get(username)?.name;
}
