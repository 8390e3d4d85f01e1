// The listing reads of accounts as raw tuples: ids in listing order, and the columns of given ids (one statement each).
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db.ts';
import type { ListingRow } from './accounts.ts';

/** A listing tuple preceded by the account's id. */
export type IdListingRow = [id: number, ...ListingRow];

const COLUMNS = `a.id, a.name, a.username, a.password, a.status, s.name, a.ip, a.b_download, a.b_upload, a.mangle,
  a.private_key, a.public_key FROM accounts a JOIN wireguard_servers s ON s.id = a.server_id`;

/** Prepared-once statements of the account listings (GET /account, GET /wireguard/<name>/peers). */
export class AccountListingRows {
  private readonly idsAll: Statement<[number, number], number>;
  private readonly idsOfServer: Statement<[number, number, number], number>;
  private readonly byIds: Statement<[string], IdListingRow>;

  constructor(db: Db) {
    this.idsAll = db.prepare<[number, number], number>('SELECT id FROM accounts ORDER BY id LIMIT ? OFFSET ?').pluck();
    this.idsOfServer = db
      .prepare<[number, number, number], number>('SELECT id FROM accounts WHERE server_id = ? ORDER BY id LIMIT ? OFFSET ?')
      .pluck();
    // One JSON array parameter instead of a statement per IN-list length.
    this.byIds = db.prepare<[string], IdListingRow>(`SELECT ${COLUMNS} WHERE a.id IN (SELECT value FROM json_each(?))`).raw(true);
  }

  /** Ids of every account (or of one server's), in id order; `limit` -1 = all. */
  ids(serverId: number | null, limit = -1, offset = 0): number[] {
    return serverId === null ? this.idsAll.all(limit, offset) : this.idsOfServer.all(serverId, limit, offset);
  }

  /** The listing columns of the given ids (any order; ids that no longer exist are absent). */
  rows(ids: readonly number[]): IdListingRow[] {
    return ids.length === 0 ? [] : this.byIds.all(JSON.stringify(ids));
  }
}
