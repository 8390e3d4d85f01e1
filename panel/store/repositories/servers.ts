// Prepared-statement access to `wireguard_servers` (rows hold the private key sealed, never in clear).
import type { Db } from '../db.ts';

/** One stored server; `private_key` is sealed. */
export interface ServerRow {
  id: number;
  name: string;
  interface_name: string;
  listen_port: number;
  address: string;
  net_first: number;
  net_last: number;
  external_ip: string;
  external_interface: string | null;
  endpoint: string;
  dns_1: string;
  dns_2: string;
  internal_traffic: number;
  keep_alive: number;
  mtu: number;
  allowed_ips: string;
  b_download: number;
  b_upload: number;
  ikev2: number;
  ipv6: number;
  address_ipv6: string;
  dns_1_ipv6: string;
  dns_2_ipv6: string;
  private_key: string;
  public_key: string;
}

/** A row to write (the id is assigned by SQLite on insert). */
export type ServerValues = Omit<ServerRow, 'id'>;

const COLUMNS: Array<keyof ServerValues> = [
  'name', 'interface_name', 'listen_port', 'address', 'net_first', 'net_last', 'external_ip', 'external_interface',
  'endpoint', 'dns_1', 'dns_2', 'internal_traffic', 'keep_alive', 'mtu', 'allowed_ips', 'b_download', 'b_upload',
  'ikev2', 'ipv6', 'address_ipv6', 'dns_1_ipv6', 'dns_2_ipv6', 'private_key', 'public_key',
];

/** Repository of WireGuard servers; every statement is prepared once. */
export class ServersRepository {
  private readonly byName;
  private readonly byId;
  private readonly all;
  private readonly interfaceNamesStmt;
  private readonly insertStmt;
  private readonly insertWithIdStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly nameTaken;
  private readonly interfaceTaken;
  private readonly portTaken;
  private readonly publicKeyTaken;
  private readonly overlapping;
  private readonly countStmt;

  constructor(private readonly db: Db) {
    const named = COLUMNS.map((c) => `@${c}`).join(', ');
    this.byName = db.prepare<[string], ServerRow>('SELECT * FROM wireguard_servers WHERE name = ?');
    this.byId = db.prepare<[number], ServerRow>('SELECT * FROM wireguard_servers WHERE id = ?');
    this.all = db.prepare<[], ServerRow>('SELECT * FROM wireguard_servers ORDER BY id');
    this.interfaceNamesStmt = db.prepare<[], string>('SELECT interface_name FROM wireguard_servers ORDER BY id').pluck();
    this.insertStmt = db.prepare(`INSERT INTO wireguard_servers (${COLUMNS.join(', ')}) VALUES (${named})`);
    this.insertWithIdStmt = db.prepare(`INSERT INTO wireguard_servers (id, ${COLUMNS.join(', ')}) VALUES (@id, ${named})`);
    this.updateStmt = db.prepare(`UPDATE wireguard_servers SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`);
    this.deleteStmt = db.prepare<[number]>('DELETE FROM wireguard_servers WHERE id = ?');
    this.nameTaken = db.prepare<[string], { id: number }>('SELECT id FROM wireguard_servers WHERE name = ?');
    this.interfaceTaken = db.prepare<[string], { id: number }>('SELECT id FROM wireguard_servers WHERE interface_name = ?');
    this.portTaken = db.prepare<[number], { id: number }>('SELECT id FROM wireguard_servers WHERE listen_port = ?');
    this.publicKeyTaken = db.prepare<[string], { id: number }>('SELECT id FROM wireguard_servers WHERE public_key = ?');
    this.overlapping = db.prepare<[number, number, number], { id: number }>(
      'SELECT id FROM wireguard_servers WHERE net_first <= ? AND net_last >= ? AND id != ? LIMIT 1',
    );
    this.countStmt = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM wireguard_servers');
  }

  get(name: string): ServerRow | undefined {
    return this.byName.get(name);
  }

  getById(id: number): ServerRow | undefined {
    return this.byId.get(id);
  }

  /** Every server, oldest first (servers are few). */
  list(): ServerRow[] {
    return this.all.all();
  }

  /** The interface name of every server, oldest first (each account change asks; no full rows). */
  interfaceNames(): string[] {
    return this.interfaceNamesStmt.all();
  }

  count(): number {
    return this.countStmt.get()!.n;
  }

  /** Inserts and returns the new id. */
  insert(values: ServerValues): number {
    return Number(this.insertStmt.run(values).lastInsertRowid);
  }

  /** Re-inserts a row under its old id (compensation after a failed data-plane call). */
  restore(row: ServerRow): void {
    this.insertWithIdStmt.run(row);
  }

  update(row: ServerRow): void {
    this.updateStmt.run(row);
  }

  delete(id: number): void {
    this.deleteStmt.run(id);
  }

  /** Whether another server (not `exceptId`) already uses the value. */
  nameInUse(name: string, exceptId = 0): boolean {
    return taken(this.nameTaken.get(name), exceptId);
  }

  interfaceInUse(name: string, exceptId = 0): boolean {
    return taken(this.interfaceTaken.get(name), exceptId);
  }

  portInUse(port: number, exceptId = 0): boolean {
    return taken(this.portTaken.get(port), exceptId);
  }

  publicKeyInUse(key: string, exceptId = 0): boolean {
    return taken(this.publicKeyTaken.get(key), exceptId);
  }

  /** Whether the subnet [first, last] overlaps the subnet of a server other than `exceptId`. */
  subnetOverlaps(first: number, last: number, exceptId = 0): boolean {
    return this.overlapping.get(last, first, exceptId) !== undefined;
  }
}

function taken(row: { id: number } | undefined, exceptId: number): boolean {
  return row !== undefined && row.id !== exceptId;
}
