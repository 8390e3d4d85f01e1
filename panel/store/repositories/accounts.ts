// Prepared-statement access to `accounts`; every lookup a request makes is an indexed one (no scans per change).
import type { Statement } from 'better-sqlite3';
import { AccountListingRows } from './account-listing-rows.ts';
import type { Db } from '../db.ts';

/** One stored account; `password` and `private_key` are sealed. */
export interface AccountRow {
  id: number;
  name: string;
  username: string;
  password: string;
  status: 'enable' | 'disable';
  server_id: number;
  ip: number;
  allowed_ips_ipv6: string | null;
  b_download: number;
  b_upload: number;
  mangle: number;
  private_key: string;
  public_key: string;
}

/** An account joined with the name of its server. */
export interface AccountWithServer extends AccountRow {
  wg_name: string;
}

/** A row to write (the id is assigned by SQLite on insert). */
export type AccountValues = Omit<AccountRow, 'id'>;

/** An account's bandwidth (set_bandwidth keeps the previous values for compensation). */
export interface BandwidthRow {
  id: number;
  b_download: number;
  b_upload: number;
}

/** What the data plane needs of an enabled peer (WireGuard, firewall mark, shaping rates). */
export interface PeerRow {
  public_key: string;
  ip: number;
  allowed_ips_ipv6: string | null;
  mangle: number;
  b_download: number;
  b_upload: number;
}

const COLUMNS: Array<keyof AccountValues> = [
  'name', 'username', 'password', 'status', 'server_id', 'ip', 'allowed_ips_ipv6', 'b_download', 'b_upload', 'mangle',
  'private_key', 'public_key',
];
/** How many accounts the by-name cache holds (oldest dropped first). */
const NAME_CACHE_SIZE = 10_000;

const SELECT = 'SELECT a.*, s.name AS wg_name FROM accounts a JOIN wireguard_servers s ON s.id = a.server_id';

/** Repository of accounts; every statement is prepared once. */
/** A port forward row as stored (what an account delete cascades away). */
export interface StoredForward {
  server_id: number;
  dst_port: number;
  protocol: string;
  account_id: number;
  to_port: number;
  created_at: string;
}

/** One day of an account's traffic statistics as stored. */
export interface StoredStatisticsDay {
  account_id: number;
  day: string;
  traffic_download: number;
  traffic_upload: number;
}

/** What deleting an account removed besides its row (the cascade), kept to restore it. */
export interface AccountDependents {
  forwards: StoredForward[];
  /** Its daily traffic statistics (absent in callers that predate them). */
  statistics?: StoredStatisticsDay[];
}

export class AccountsRepository {
  private readonly byName;
  private readonly byPublicKey;
  private readonly nameOfMangle;
  private readonly endpointOf;
  private readonly setEndpointStmt;
  private readonly all;
  private readonly ofServer;
  private readonly peersOfServer;
  private readonly ipsOfServer;
  private readonly insertStmt;
  private readonly insertWithIdStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly forwardsOfStmt;
  private readonly insertForwardStmt;
  private readonly statisticsOfStmt;
  private readonly insertStatisticsStmt;
  private readonly nameTaken;
  private readonly usernameTaken;
  private readonly ipTaken;
  private readonly ipv6Taken;
  private readonly publicKeyTaken;
  private readonly anyOfServer;
  private readonly rangeOfServer;
  private readonly countStmt;
  private readonly nextSeqStmt;

  private readonly createTx: (make: (seq: number) => AccountValues) => AccountRow;
  /**
   * Rows read by name, frozen, for the hot GET /account/<name>. Every account write in this repository empties it;
   * rows read inside a transaction are not kept (a rollback could undo them). Nothing else writes accounts.
   */
  private readonly byNameCache = new Map<string, Readonly<AccountWithServer>>();
  /** Listeners of {@link onRowsChanged}. */
  private readonly rowListeners: Array<(id: number | null) => void> = [];

  constructor(private readonly db: Db) {
    const named = COLUMNS.map((c) => `@${c}`).join(', ');
    this.byName = db.prepare<[string], AccountWithServer>(`${SELECT} WHERE a.name = ?`);
    this.byPublicKey = db.prepare<[string], AccountWithServer>(`${SELECT} WHERE a.public_key = ?`);
    this.nameOfMangle = db.prepare<[number], string>('SELECT name FROM accounts WHERE mangle = ?').pluck();
    this.endpointOf = db.prepare<[number], string | null>('SELECT last_endpoint FROM accounts WHERE id = ?').pluck();
    this.setEndpointStmt = db.prepare<[string | null, number]>('UPDATE accounts SET last_endpoint = ? WHERE id = ?');
    this.all = db.prepare<[], AccountWithServer>(`${SELECT} ORDER BY a.id`);
    this.ofServer = db.prepare<[number], AccountWithServer>(`${SELECT} WHERE a.server_id = ? ORDER BY a.id`);
    this.peersOfServer = db.prepare<[number], PeerRow>(
      "SELECT public_key, ip, allowed_ips_ipv6, mangle, b_download, b_upload FROM accounts WHERE server_id = ? AND status = 'enable'",
    );
    this.ipsOfServer = db
      .prepare<[number], number>('SELECT ip FROM accounts WHERE server_id = ? ORDER BY ip')
      .pluck();
    this.insertStmt = db.prepare(`INSERT INTO accounts (${COLUMNS.join(', ')}) VALUES (${named})`);
    this.insertWithIdStmt = db.prepare(`INSERT INTO accounts (id, ${COLUMNS.join(', ')}) VALUES (@id, ${named})`);
    this.updateStmt = db.prepare(`UPDATE accounts SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`);
    this.deleteStmt = db.prepare<[number]>('DELETE FROM accounts WHERE id = ?');
    this.forwardsOfStmt = db.prepare<[number], StoredForward>(
      'SELECT server_id, dst_port, protocol, account_id, to_port, created_at FROM port_forwards WHERE account_id = ?');
    this.insertForwardStmt = db.prepare<[StoredForward]>(`INSERT INTO port_forwards (server_id, dst_port, protocol, account_id, to_port, created_at)
      VALUES (@server_id, @dst_port, @protocol, @account_id, @to_port, @created_at)`);
    this.statisticsOfStmt = db.prepare<[number], StoredStatisticsDay>(
      'SELECT account_id, day, traffic_download, traffic_upload FROM traffic_statistics WHERE account_id = ?');
    this.insertStatisticsStmt = db.prepare<[StoredStatisticsDay]>(`INSERT INTO traffic_statistics (account_id, day, traffic_download, traffic_upload)
      VALUES (@account_id, @day, @traffic_download, @traffic_upload)`);
    this.nameTaken = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE name = ?');
    this.usernameTaken = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE username = ?');
    this.ipTaken = db.prepare<[number], { id: number }>('SELECT id FROM accounts WHERE ip = ?');
    this.ipv6Taken = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE allowed_ips_ipv6 = ?');
    this.publicKeyTaken = db.prepare<[string], { id: number }>('SELECT id FROM accounts WHERE public_key = ?');
    this.anyOfServer = db.prepare<[number], { id: number }>('SELECT id FROM accounts WHERE server_id = ? LIMIT 1');
    this.rangeOfServer = db.prepare<[number], { lo: number | null; hi: number | null }>(
      'SELECT MIN(ip) AS lo, MAX(ip) AS hi FROM accounts WHERE server_id = ?',
    );
    this.countStmt = db.prepare<[], number>("SELECT value FROM wireguard_counters WHERE name = 'accounts'").pluck();
    this.nextSeqStmt = db
      .prepare<[], number>("UPDATE wireguard_counters SET value = value + 1 WHERE name = 'account_seq' RETURNING value")
      .pluck();
    this.createTx = db.transaction((make: (seq: number) => AccountValues) => {
      const values = make(this.nextSequence());
      return { id: this.insert(values), ...values };
    });
  }

  /**
   * Draws the next sequence value and inserts the row `make` builds from it, in one transaction (one commit).
   * Returns the stored row.
   */
  create(make: (seq: number) => AccountValues): AccountRow {
    return this.createTx(make);
  }

  get(name: string): AccountWithServer | undefined {
    const cached = this.byNameCache.get(name);
    if (cached) return cached;
    const row = this.byName.get(name);
    if (row && !this.db.inTransaction) {
      if (this.byNameCache.size >= NAME_CACHE_SIZE) this.byNameCache.delete(this.byNameCache.keys().next().value as string);
      this.byNameCache.set(name, Object.freeze(row));
    }
    return row;
  }

  /** The endpoint a suspended peer last had (`ip:port`), or null (migration 003). */
  lastEndpoint(id: number): string | null {
    return this.endpointOf.get(id) ?? null;
  }

  /** Records (or clears, with null) the endpoint of a peer being suspended. */
  setLastEndpoint(id: number, endpoint: string | null): void {
    this.setEndpointStmt.run(endpoint, id);
  }

  /** Name of the account holding a `mangle` mark (unique index), or undefined. */
  nameByMangle(mark: number): string | undefined {
    return this.nameOfMangle.get(mark);
  }

  getByPublicKey(key: string): AccountWithServer | undefined {
    return this.byPublicKey.get(key);
  }

  /** Every account, oldest first, streamed. */
  iterate(): IterableIterator<AccountWithServer> {
    return this.all.iterate();
  }

  /** Accounts of one server, oldest first, streamed. */
  iterateOfServer(serverId: number): IterableIterator<AccountWithServer> {
    return this.ofServer.iterate(serverId);
  }

  /** Enabled peers of one server (what its interface should carry), streamed. */
  iterateEnabledPeers(serverId: number): IterableIterator<PeerRow> {
    return this.peersOfServer.iterate(serverId);
  }

  /** Used IPv4 addresses of one server in ascending order, streamed through the (server_id, ip) index. */
  iterateIps(serverId: number): IterableIterator<number> {
    return this.ipsOfServer.iterate(serverId);
  }

  /** Lowest and highest peer address of a server (two index probes), null when it has none. */
  ipRange(serverId: number): { lo: number; hi: number } | null {
    const row = this.rangeOfServer.get(serverId);
    return row && row.lo !== null && row.hi !== null ? { lo: row.lo, hi: row.hi } : null;
  }

  hasAccounts(serverId: number): boolean {
    return this.anyOfServer.get(serverId) !== undefined;
  }

  /** Account count per server name and status (GET /metrics), one grouped statement. */
  countsByState(): Array<{ wg_name: string; status: string; count: number }> {
    return this.db.prepare<[], { wg_name: string; status: string; count: number }>(
      `SELECT s.name AS wg_name, a.status AS status, COUNT(*) AS count FROM accounts a
       JOIN wireguard_servers s ON s.id = a.server_id GROUP BY a.server_id, a.status`).all();
  }

  /** Public key → account name of every account (GET /metrics with per-peer series). */
  namesByPublicKey(): Map<string, string> {
    const rows = this.db.prepare<[], [string, string]>('SELECT public_key, name FROM accounts').raw(true).all();
    return new Map(rows);
  }

  /** Empties the by-name cache (after a backup restore replaced the table underneath). */
  forgetCached(): void {
    this.byNameCache.clear();
    this.changed(null);
  }

  private listingReadsOnce?: AccountListingRows;

  /** The bulk reads of the listings and of /wireguard/online on this repository's connection, prepared once. */
  listingReads(): AccountListingRows {
    this.listingReadsOnce ??= new AccountListingRows(this.db);
    return this.listingReadsOnce;
  }

  /**
   * Registers `listener`, called after every account write of this repository with the written row's id, or with
   * `null` when many rows (a bulk write) or unknown rows (a restore underneath) changed. Caches of derived values
   * (the listing fragments) follow the store through it.
   */
  onRowsChanged(listener: (id: number | null) => void): void {
    this.rowListeners.push(listener);
  }

  private changed(id: number | null): void {
    for (const listener of this.rowListeners) listener(id);
  }

  /** Number of accounts, kept by triggers (O(1)). */
  count(): number {
    return this.countStmt.get() ?? 0;
  }

  /** Next value of the account sequence (mangle marks and generated names); never reused. */
  private nextSequence(): number {
    return this.nextSeqStmt.get()!;
  }

  insert(values: AccountValues): number {
    this.byNameCache.clear();
    const id = Number(this.insertStmt.run(values).lastInsertRowid);
    this.changed(id);
    return id;
  }

  /**
   * Re-inserts a row under its old id with the dependents its delete cascaded away (compensation after a failed
   * data-plane call).
   */
  restore(row: AccountRow, dependents: AccountDependents = { forwards: [] }): void {
    this.byNameCache.clear();
    this.db.transaction(() => {
      this.insertWithIdStmt.run(pick(row));
      for (const forward of dependents.forwards) this.insertForwardStmt.run(forward);
      for (const day of dependents.statistics ?? []) this.insertStatisticsStmt.run(day);
    })();
    this.changed(row.id);
  }

  update(row: AccountRow): void {
    this.byNameCache.clear();
    this.updateStmt.run(pick(row));
    this.changed(row.id);
  }

  /** Deletes the row; its port forwards go with it (ON DELETE CASCADE) and are returned for {@link restore}. */
  delete(id: number): AccountDependents {
    this.byNameCache.clear();
    const dependents = this.db.transaction(() => {
      const forwards = this.forwardsOfStmt.all(id);
      const statistics = this.statisticsOfStmt.all(id);
      this.deleteStmt.run(id);
      return { forwards, statistics };
    })();
    this.changed(id);
    return dependents;
  }

  /**
   * Sets `b_download`/`b_upload` of every account of a server in one transaction (PUT /wireguard/<name>/set_bandwidth);
   * returns the previous values for {@link restoreBandwidths}.
   */
  setServerBandwidth(serverId: number, download: number, upload: number): BandwidthRow[] {
    const s = this.bandwidthStatements();
    this.byNameCache.clear();
    const result = this.db.transaction(() => {
      const before = s.read.all(serverId);
      s.setAll.run(download, upload, serverId);
      return before;
    })();
    this.changed(null);
    return result;
  }

  /** Writes back the values {@link setServerBandwidth} returned, in one transaction. */
  restoreBandwidths(rows: BandwidthRow[]): void {
    const s = this.bandwidthStatements();
    this.byNameCache.clear();
    this.db.transaction(() => {
      for (const row of rows) s.setOne.run(row.b_download, row.b_upload, row.id);
    })();
    this.changed(null);
  }

  private bandwidthStmts?: {
    read: Statement<[number], BandwidthRow>;
    setAll: Statement<[number, number, number]>;
    setOne: Statement<[number, number, number]>;
  };

  /** The set_bandwidth statements, prepared once on first use. */
  private bandwidthStatements() {
    this.bandwidthStmts ??= {
      read: this.db.prepare<[number], BandwidthRow>('SELECT id, b_download, b_upload FROM accounts WHERE server_id = ?'),
      setAll: this.db.prepare<[number, number, number]>('UPDATE accounts SET b_download = ?, b_upload = ? WHERE server_id = ?'),
      setOne: this.db.prepare<[number, number, number]>('UPDATE accounts SET b_download = ?, b_upload = ? WHERE id = ?'),
    };
    return this.bandwidthStmts;
  }

  nameInUse(name: string, exceptId = 0): boolean {
    return taken(this.nameTaken.get(name), exceptId);
  }

  usernameInUse(username: string, exceptId = 0): boolean {
    return taken(this.usernameTaken.get(username), exceptId);
  }

  ipInUse(ip: number, exceptId = 0): boolean {
    return taken(this.ipTaken.get(ip), exceptId);
  }

  ipv6InUse(cidr: string, exceptId = 0): boolean {
    return taken(this.ipv6Taken.get(cidr), exceptId);
  }

  publicKeyInUse(key: string, exceptId = 0): boolean {
    return taken(this.publicKeyTaken.get(key), exceptId);
  }
}

function taken(row: { id: number } | undefined, exceptId: number): boolean {
  return row !== undefined && row.id !== exceptId;
}

/** Only the table's columns (a joined row also carries `wg_name`). */
function pick(row: AccountRow): AccountRow {
  const out = { id: row.id } as AccountRow;
  for (const column of COLUMNS) (out as unknown as Record<string, unknown>)[column] = row[column];
  return out;
}
