// The bulk reads of accounts as raw tuples: listing ids in order, listing columns of given ids, /wireguard/online's index.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db.ts';

/** One account of a listing as a tuple, in the wire's field order. */
export type ListingRow = [
  name: string, username: string, password: string, status: 'enable' | 'disable', wg_name: string, ip: number,
  b_download: number, b_upload: number, mangle: number, private_key: string, public_key: string,
];

/** A listing tuple preceded by the account's id. */
export type IdListingRow = [id: number, ...ListingRow];

/** An account as GET /wireguard/online's index holds it: id, server id, public key, then the listed columns. */
export type OnlineIndexTuple = [
  id: number, server_id: number, public_key: string, name: string, username: string, status: 'enable' | 'disable',
  ip: number, b_download: number, b_upload: number,
];

const ONLINE_COLUMNS = 'SELECT id, server_id, public_key, name, username, status, ip, b_download, b_upload FROM accounts';

const COLUMNS = `a.id, a.name, a.username, a.password, a.status, s.name, a.ip, a.b_download, a.b_upload, a.mangle,
  a.private_key, a.public_key FROM accounts a JOIN wireguard_servers s ON s.id = a.server_id`;

/** Prepared-once statements of the account listings (GET /account, /wireguard/<name>/peers) and /wireguard/online. */
export class AccountListingRows {
  private readonly idsAll: Statement<[number, number], number>;
  private readonly idsOfServer: Statement<[number, number, number], number>;
  private readonly byIds: Statement<[string], IdListingRow>;
  private readonly onlineAll: Statement<[], OnlineIndexTuple>;
  private readonly onlineByIds: Statement<[string], OnlineIndexTuple>;

  constructor(db: Db) {
    this.idsAll = db.prepare<[number, number], number>('SELECT id FROM accounts ORDER BY id LIMIT ? OFFSET ?').pluck();
    this.idsOfServer = db
      .prepare<[number, number, number], number>('SELECT id FROM accounts WHERE server_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .pluck();
    // One JSON array parameter instead of a statement per IN-list length.
    this.byIds = db.prepare<[string], IdListingRow>(`SELECT ${COLUMNS} WHERE a.id IN (SELECT value FROM json_each(?))`).raw(true);
    this.onlineAll = db.prepare<[], OnlineIndexTuple>(ONLINE_COLUMNS).raw(true);
    this.onlineByIds = db.prepare<[string], OnlineIndexTuple>(`${ONLINE_COLUMNS} WHERE id IN (SELECT value FROM json_each(?))`).raw(true);
  }

  /** Ids of every account (or of one server's), in id order; `limit` -1 = all. */
  ids(serverId: number | null, limit = -1, offset = 0): number[] {
    return serverId === null ? this.idsAll.all(limit, offset) : this.idsOfServer.all(serverId, limit, offset);
  }

  /** The listing columns of the given ids (any order; ids that no longer exist are absent). */
  rows(ids: readonly number[]): IdListingRow[] {
    return ids.length === 0 ? [] : this.byIds.all(JSON.stringify(ids));
  }

  /** What GET /wireguard/online needs of every account (`ids` null) or of the given ids. */
  online(ids: readonly number[] | null): OnlineIndexTuple[] {
    return ids === null ? this.onlineAll.all() : this.onlineByIds.all(JSON.stringify(ids));
  }
}
