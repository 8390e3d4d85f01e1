// Prepared-statement access to `port_forwards` (keyed by server + dst_port + protocol; a pair is unique overall).
import type { PortForwardRule } from '../../dataplane/firewall/firewall.ts';
import type { Db } from '../db.ts';

/** `tcp` or `udp`. */
export type ForwardProtocol = PortForwardRule['protocol'];

/** One stored forward with its peer (account) joined. */
export interface PortForwardEntry {
  server_id: number;
  dst_port: number;
  protocol: ForwardProtocol;
  account_id: number;
  to_port: number;
  /** The peer's (account's) name. */
  to_peer: string;
  /** The peer's IPv4 address as an unsigned 32-bit number. */
  ip: number;
  /** The peer's status: forwards of a disabled peer stay stored but are not in the data plane. */
  status: 'enable' | 'disable';
}

/** A row to write. */
export interface PortForwardValues {
  server_id: number;
  dst_port: number;
  protocol: ForwardProtocol;
  account_id: number;
  to_port: number;
}

const SELECT = `SELECT f.server_id, f.dst_port, f.protocol, f.account_id, f.to_port, a.name AS to_peer, a.ip, a.status
  FROM port_forwards f JOIN accounts a ON a.id = f.account_id`;

/** Dotted quad of an unsigned 32-bit address. */
function dotted(ip: number): string {
  return [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join('.');
}

/** Repository of port forwards; every statement is prepared once. */
export class PortForwardsRepository {
  private readonly ofServer;
  private readonly activeOfServer;
  private readonly byPairStmt;
  private readonly insertStmt;
  private readonly deleteStmt;

  constructor(db: Db) {
    this.ofServer = db.prepare<[number], PortForwardEntry>(`${SELECT} WHERE f.server_id = ? ORDER BY f.dst_port, f.protocol`);
    this.activeOfServer = db.prepare<[number], PortForwardEntry>(
      `${SELECT} WHERE f.server_id = ? AND a.status = 'enable' ORDER BY f.dst_port, f.protocol`,
    );
    this.byPairStmt = db.prepare<[number, string], PortForwardEntry>(`${SELECT} WHERE f.dst_port = ? AND f.protocol = ?`);
    this.insertStmt = db.prepare<[PortForwardValues]>(
      'INSERT INTO port_forwards (server_id, dst_port, protocol, account_id, to_port) VALUES (@server_id, @dst_port, @protocol, @account_id, @to_port)',
    );
    this.deleteStmt = db.prepare<[number, number, string]>('DELETE FROM port_forwards WHERE server_id = ? AND dst_port = ? AND protocol = ?');
  }

  /** Every stored forward of a server (enabled and disabled peers), by dst_port then protocol. */
  listOfServer(serverId: number): PortForwardEntry[] {
    return this.ofServer.all(serverId);
  }

  /**
   * The forwards the data plane of a server carries: those to enabled peers, as the firewall takes them
   * (`to_ip` dotted). What `DataplaneSync.applyForwards` and the boot/reload reconcile are given.
   */
  listForwards(serverId: number): PortForwardRule[] {
    return this.activeOfServer.all(serverId).map((f) => ({ dst_port: f.dst_port, protocol: f.protocol, to_ip: dotted(f.ip), to_port: f.to_port }));
  }

  /** The forward of a `dst_port`/`protocol` pair (unique over every server), or undefined. */
  byPair(dstPort: number, protocol: ForwardProtocol): PortForwardEntry | undefined {
    return this.byPairStmt.get(dstPort, protocol);
  }

  insert(values: PortForwardValues): void {
    this.insertStmt.run(values);
  }

  /** Deletes one forward; returns whether it existed. */
  delete(serverId: number, dstPort: number, protocol: ForwardProtocol): boolean {
    return this.deleteStmt.run(serverId, dstPort, protocol).changes > 0;
  }
}
