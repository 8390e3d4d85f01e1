// Daily traffic rows and the packed per-source counter baselines (migrations 005, 010); a sample's writes go in one transaction.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db.ts';
import { baselineSet, packBaselines, unpackBaselines, type BaselineSet } from '../../services/statistics/baseline-set.ts';

/** One stored day of one account. */
export interface TrafficDayRow {
  day: string;
  traffic_download: number;
  traffic_upload: number;
}

/**
 * The writes of one sample. Day additions column-wise (entry `i`: add `download[i]`/`upload[i]` bytes to account
 * `accountIds[i]`'s row of day `days[i]`); `sets`: the new baselines per source, null to drop a source's.
 */
export interface SampleWrite {
  accountIds: number[];
  days: string[];
  download: number[];
  upload: number[];
  sets: Map<string, BaselineSet | null>;
}

/**
 * Day rows added per statement. An account and day may appear twice in one batch (its WireGuard peer and an IKE
 * SA): SQLite inserts the VALUES rows one after the other, so the second one takes the DO UPDATE path.
 */
const ADD_BATCH = 100;

type LegacyRow = [accountId: number, publicKey: string, rx: number, tx: number, sampledAt: number, iface: string];

/** Reads and writes `traffic_statistics` and `traffic_baseline_sets`. */
export class TrafficStatisticsRepository {
  private readonly addStmt: Statement<[number, string, number, number]>;
  private readonly addManyStmt: Statement<[Array<number | string>]>;
  private readonly putSetStmt: Statement<[string, number, Buffer]>;
  private readonly dropSetStmt: Statement<[string]>;
  private readonly setsStmt: Statement<[], [string, number, Buffer]>;
  private readonly serversStmt: Statement<[], [number, string]>;
  private readonly keysStmt: Statement<[], [string, number, number]>;
  private readonly usernameStmt: Statement<[string], number>;
  private readonly monthStmt: Statement<[number, string, string], TrafficDayRow>;
  private readonly rangeStmt: Statement<[string, string], TrafficDayRow & { account: string }>;
  private readonly pruneStmt: Statement<[string]>;
  private readonly sampledAtStmt: Statement<[string], number>;
  private readonly writeTx;

  constructor(private readonly db: Db) {
    const add = (rows: number) =>
      `INSERT INTO traffic_statistics (account_id, day, traffic_download, traffic_upload) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}
       ON CONFLICT (day, account_id) DO UPDATE SET traffic_download = traffic_download + excluded.traffic_download,
         traffic_upload = traffic_upload + excluded.traffic_upload`;
    this.addStmt = db.prepare(add(1));
    this.addManyStmt = db.prepare<[Array<number | string>]>(add(ADD_BATCH));
    this.putSetStmt = db.prepare(
      `INSERT INTO traffic_baseline_sets (source, sampled_at, data) VALUES (?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET sampled_at = excluded.sampled_at, data = excluded.data`,
    );
    this.dropSetStmt = db.prepare('DELETE FROM traffic_baseline_sets WHERE source = ?');
    this.setsStmt = db.prepare<[], [string, number, Buffer]>('SELECT source, sampled_at, data FROM traffic_baseline_sets').raw(true);
    this.serversStmt = db.prepare<[], [number, string]>('SELECT id, interface_name FROM wireguard_servers ORDER BY id').raw(true);
    this.keysStmt = db.prepare<[], [string, number, number]>('SELECT public_key, id, server_id FROM accounts').raw(true);
    this.usernameStmt = db.prepare<[string], number>('SELECT id FROM accounts WHERE username = ?').pluck();
    this.monthStmt = db.prepare(
      'SELECT day, traffic_download, traffic_upload FROM traffic_statistics WHERE account_id = ? AND day >= ? AND day <= ? ORDER BY day',
    );
    this.rangeStmt = db.prepare(
      `SELECT a.name AS account, s.day AS day, s.traffic_download AS traffic_download, s.traffic_upload AS traffic_upload
       FROM traffic_statistics s JOIN accounts a ON a.id = s.account_id WHERE s.day >= ? AND s.day <= ? ORDER BY a.name, s.day`,
    );
    this.pruneStmt = db.prepare('DELETE FROM traffic_statistics WHERE day < ?');
    this.sampledAtStmt = db.prepare<[string], number>('SELECT sampled_at FROM traffic_baseline_sets WHERE source = ?').pluck();
    this.writeTx = db.transaction((write: SampleWrite, expected?: ReadonlyMap<string, number | null>) => {
      for (const [source, sampledAt] of expected ?? []) {
        const stored = this.sampledAtStmt.get(source) ?? null;
        if (stored !== sampledAt) throw new BaselineConflictError(source, sampledAt, stored);
      }
      // In account order: the day rows of one day sit apart per account, so sorted upserts walk the B-tree once.
      // ADD_BATCH rows per statement (about a quarter less time than one statement per row at 50,000 rows).
      const order = Uint32Array.from(write.accountIds.keys()).sort((a, b) => write.accountIds[a] - write.accountIds[b]);
      const params: Array<number | string> = new Array(4 * ADD_BATCH);
      let next = 0;
      for (; next + ADD_BATCH <= order.length; next += ADD_BATCH) {
        for (let j = 0; j < ADD_BATCH; j++) {
          const i = order[next + j];
          params[4 * j] = write.accountIds[i];
          params[4 * j + 1] = write.days[i];
          params[4 * j + 2] = write.download[i];
          params[4 * j + 3] = write.upload[i];
        }
        this.addManyStmt.run(params);
      }
      for (; next < order.length; next++) {
        const i = order[next];
        this.addStmt.run(write.accountIds[i], write.days[i], write.download[i], write.upload[i]);
      }
      for (const [source, set] of write.sets) {
        if (set) this.putSetStmt.run(source, set.sampledAt, packBaselines(set));
        else this.dropSetStmt.run(source);
      }
    });
  }

  /** The database file (a sample engine in a worker opens its own connection to it), null for an in-memory store. */
  get file(): string | null {
    return this.db.memory ? null : this.db.name;
  }

  /** Every account's public key, id and server id (the sample engine's key index). */
  accountKeys(): Array<[publicKey: string, id: number, serverId: number]> {
    return this.keysStmt.all();
  }

  /** Every server's id and interface name. */
  servers(): Array<[id: number, iface: string]> {
    return this.serversStmt.all();
  }

  /** The id of the account with this username (an IKE SA's EAP identity), or undefined. */
  accountIdOfUsername(username: string): number | undefined {
    return this.usernameStmt.get(username);
  }

  /**
   * The stored baselines per source. The first call after migration 010 also carries the per-account rows of 005
   * over (packed per interface, the legacy table dropped, one transaction).
   */
  loadSets(): Map<string, BaselineSet> {
    this.migrateLegacy();
    const out = new Map<string, BaselineSet>();
    for (const [source, sampledAt, data] of this.setsStmt.all()) out.set(source, unpackBaselines(data, sampledAt));
    return out;
  }

  /**
   * Applies one sample's day additions and baselines in one IMMEDIATE transaction. With `expected` (per source the
   * `sampled_at` of the baselines the deltas were taken against, null for none), nothing is written and a
   * {@link BaselineConflictError} thrown when the stored baselines are not those: another engine wrote since, and
   * counting these deltas again would count bytes twice.
   */
  write(sample: SampleWrite, expected?: ReadonlyMap<string, number | null>): void {
    this.writeTx.immediate(sample, expected);
  }

  /** The stored days of one account between `first` and `last` (inclusive, `YYYY-MM-DD`). */
  days(accountId: number, first: string, last: string): TrafficDayRow[] {
    return this.monthStmt.all(accountId, first, last);
  }

  /** Every account's stored rows of the days `first`..`last` (days without traffic have none), by account name and day. */
  allDays(first: string, last: string): Array<TrafficDayRow & { account: string }> {
    return this.rangeStmt.all(first, last);
  }

  /** Deletes every row of a day before `firstKept`; returns how many. */
  pruneBefore(firstKept: string): number {
    return this.pruneStmt.run(firstKept).changes;
  }

  private migrateLegacy(): void {
    const hasLegacy = () => !!this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'traffic_baselines_legacy'").get();
    if (!hasLegacy()) return;
    this.db.transaction(() => {
      // checked again under the write lock: another connection (a worker, the sampler's fallback) may have done it
      if (!hasLegacy()) return;
      const rows = this.db.prepare<[], LegacyRow>(
        `SELECT b.account_id, b.public_key, b.rx, b.tx, b.sampled_at, s.interface_name FROM traffic_baselines_legacy b
         JOIN accounts a ON a.id = b.account_id JOIN wireguard_servers s ON s.id = a.server_id`,
      ).raw(true).all();
      const byIface = new Map<string, LegacyRow[]>();
      for (const row of rows) {
        const list = byIface.get(row[5]);
        if (list) list.push(row);
        else byIface.set(row[5], [row]);
      }
      for (const [iface, list] of byIface) {
        const set = baselineSet(
          list.reduce((max, r) => Math.max(max, r[4]), 0), list.map((r) => r[1]), Float64Array.from(list, (r) => r[0]),
          Float64Array.from(list, (r) => r[2]), Float64Array.from(list, (r) => r[3]),
        );
        this.putSetStmt.run(wireguardSource(iface), set.sampledAt, packBaselines(set));
      }
      this.db.exec('DROP TABLE traffic_baselines_legacy');
    }).immediate();
  }
}

/** The stored baselines of `source` are not the ones a sample's deltas were taken against (see write). */
export class BaselineConflictError extends Error {
  constructor(readonly source: string, expected: number | null, stored: number | null) {
    super(`traffic baselines of ${source} changed underneath (expected sampled_at ${expected}, stored ${stored}): sample not written`);
    this.name = 'BaselineConflictError';
  }
}

/** The baseline source of a WireGuard interface. */
export const wireguardSource = (iface: string): string => `wg:${iface}`;
/** The baseline source of the IKEv2 daemon's SAs. */
export const IKEV2_SOURCE = 'ikev2';
