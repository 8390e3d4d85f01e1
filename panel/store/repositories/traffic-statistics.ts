// Daily traffic rows and per-peer counter baselines (migration 005); a sample's writes go in one transaction.
import type { Db } from '../db.ts';
import type { Baseline, DayTraffic } from '../../services/statistics/deltas.ts';

/** One account of a sample with its baseline (null when none): id, public key, interface, baseline. */
export type SampleRow = [id: number, publicKey: string, iface: string, baseKey: string | null, rx: number, tx: number, sampledAt: number];

/** One stored day of one account. */
export interface TrafficDayRow {
  day: string;
  traffic_download: number;
  traffic_upload: number;
}

/** The writes of one sample. */
export interface SampleWrite {
  /** Bytes to add per account and day. */
  traffic: Array<{ accountId: number; days: DayTraffic[] }>;
  /** Baselines to store (seen in this sample). */
  baselines: Array<{ accountId: number; baseline: Baseline }>;
  /** Accounts whose peer was not in the dump: their baseline is dropped (a peer coming back starts at zero). */
  absent: number[];
}

/** Reads and writes `traffic_statistics` and `traffic_baselines`. */
export class TrafficStatisticsRepository {
  private readonly sampleRowsStmt;
  private readonly addStmt;
  private readonly putBaselineStmt;
  private readonly dropBaselineStmt;
  private readonly monthStmt;
  private readonly pruneStmt;
  private readonly writeTx;

  constructor(private readonly db: Db) {
    this.sampleRowsStmt = db.prepare<[], SampleRow>(
      `SELECT a.id, a.public_key, s.interface_name, b.public_key, b.rx, b.tx, b.sampled_at FROM accounts a
       JOIN wireguard_servers s ON s.id = a.server_id LEFT JOIN traffic_baselines b ON b.account_id = a.id`,
    ).raw(true);
    this.addStmt = db.prepare<[number, string, number, number]>(
      `INSERT INTO traffic_statistics (account_id, day, traffic_download, traffic_upload) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id, day) DO UPDATE SET traffic_download = traffic_download + excluded.traffic_download,
         traffic_upload = traffic_upload + excluded.traffic_upload`,
    );
    this.putBaselineStmt = db.prepare<[number, string, number, number, number]>(
      `INSERT INTO traffic_baselines (account_id, public_key, rx, tx, sampled_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET public_key = excluded.public_key, rx = excluded.rx, tx = excluded.tx,
         sampled_at = excluded.sampled_at`,
    );
    this.dropBaselineStmt = db.prepare<[number]>('DELETE FROM traffic_baselines WHERE account_id = ?');
    this.monthStmt = db.prepare<[number, string, string], TrafficDayRow>(
      'SELECT day, traffic_download, traffic_upload FROM traffic_statistics WHERE account_id = ? AND day >= ? AND day <= ? ORDER BY day',
    );
    this.pruneStmt = db.prepare<[string]>('DELETE FROM traffic_statistics WHERE day < ?');
    this.writeTx = db.transaction((write: SampleWrite) => {
      for (const { accountId, days } of write.traffic) {
        for (const d of days) this.addStmt.run(accountId, d.day, d.download, d.upload);
      }
      for (const { accountId, baseline: b } of write.baselines) this.putBaselineStmt.run(accountId, b.publicKey, b.rx, b.tx, b.sampledAt);
      for (const id of write.absent) this.dropBaselineStmt.run(id);
    });
  }

  /** Every account with its interface and baseline, as compact tuples (one statement; what a sample reads). */
  sampleRows(): SampleRow[] {
    return this.sampleRowsStmt.all() as unknown as SampleRow[];
  }

  /** Applies one sample's additions and baselines in one IMMEDIATE transaction. */
  write(sample: SampleWrite): void {
    this.writeTx.immediate(sample);
  }

  /** Drops one account's baseline (its peer left the interface). */
  dropBaseline(accountId: number): void {
    this.dropBaselineStmt.run(accountId);
  }

  /** The stored days of one account between `first` and `last` (inclusive, `YYYY-MM-DD`). */
  days(accountId: number, first: string, last: string): TrafficDayRow[] {
    return this.monthStmt.all(accountId, first, last);
  }

  /** Deletes every row of a day before `firstKept`; returns how many. */
  pruneBefore(firstKept: string): number {
    return this.pruneStmt.run(firstKept).changes;
  }
}
