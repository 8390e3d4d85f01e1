// Bearer tokens of the platform APIs (`admin_tokens`, admin and worker scopes) over the query layer: shown once at
// creation, stored as a SHA-256 digest only, looked up by digest so no secret is compared.
import { createHash, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import { CompiledStatement } from '../../../../store-kernel/compiled-statement.ts';
import type { QueryStore } from '../query-store.ts';
import type { StoreTables } from '../tables.ts';
import type { Kysely } from 'kysely';

/** `admin` tokens open `/api/admin/*`; `worker` tokens open only `/api/worker/*` (remote worker processes). */
export type TokenScope = 'admin' | 'worker';

export interface AdminTokenSummary {
  id: number;
  comment: string;
  created_at: string;
  last_used_at: string | null;
}

/** SHA-256 hex digest of a token. */
function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const TOKEN_PREFIX: Record<TokenScope, string> = { admin: 'vpa_', worker: 'vpw_' };

/** The token of a digest in a scope (every API request reads it: compiled once). */
const TOKEN_BY_DIGEST = new CompiledStatement<{ digest: string; scope: TokenScope }, { id: number }>((store, v) =>
  (store.db as Kysely<StoreTables>).selectFrom('admin_tokens').select('id').where('digest', '=', v.digest).where('scope', '=', v.scope));

/** Repository of `admin_tokens`, restricted to the tokens of one scope. */
export class AdminTokenQueries {
  /** When each token's `last_used_at` was last written (at most once a minute per token and process). */
  private readonly touched = new Map<number, number>();

  constructor(private readonly store: QueryStore, readonly scope: TokenScope = 'admin', private readonly clock: Clock = systemClock) {}

  /** Creates a token and returns its value; only the digest is kept. */
  async create(comment = ''): Promise<{ id: number; token: string }> {
    const token = TOKEN_PREFIX[this.scope] + randomBytes(32).toString('hex');
    const row = await this.store.db.insertInto('admin_tokens')
      .values({ digest: tokenDigest(token), comment, scope: this.scope, created_at: this.clock.now().toISOString() })
      .returning('id').executeTakeFirstOrThrow();
    return { id: Number(row.id), token };
  }

  /** The id of the token when it is valid in this scope, else null. */
  async verify(token: string): Promise<number | null> {
    if (!token.startsWith(TOKEN_PREFIX[this.scope]) || token.length > 200) return null;
    const row = await TOKEN_BY_DIGEST.first(this.store, { digest: tokenDigest(token), scope: this.scope });
    if (!row) return null;
    const id = Number(row.id);
    const now = this.clock.now().getTime();
    if ((this.touched.get(id) ?? 0) < now - 60_000) {
      this.touched.set(id, now);
      await this.store.db.updateTable('admin_tokens').set({ last_used_at: new Date(now).toISOString() }).where('id', '=', id).execute();
    }
    return id;
  }

  async list(): Promise<AdminTokenSummary[]> {
    const rows = await this.store.db.selectFrom('admin_tokens').select(['id', 'comment', 'created_at', 'last_used_at'])
      .where('scope', '=', this.scope).orderBy('id').execute();
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Deletes a token of this scope; true when it existed. */
  async delete(id: number): Promise<boolean> {
    const result = await this.store.db.deleteFrom('admin_tokens').where('id', '=', id).where('scope', '=', this.scope).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
