// Keys of the web host (session signing, CSRF cookie signing), created once and kept sealed in `web_secrets`.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../shared/clock.ts';
import type { Sealer } from '../extension.ts';
import type { QueryStore } from '../store/query/query-store.ts';

/**
 * The 32-byte key named `name`, made and stored (sealed) on first use. Processes starting together on one database each
 * offer a key with `INSERT … ON CONFLICT DO NOTHING` and all read back the one stored, so they sign with the same key.
 */
export async function webSecret(store: QueryStore, box: Sealer, clock: Clock, name: string): Promise<Buffer> {
  const read = () => store.db.selectFrom('web_secrets').select('value_sealed').where('name', '=', name).executeTakeFirst();
  let row = await read();
  if (!row) {
    const offered = box.seal(randomBytes(32).toString('base64'));
    await store.db.insertInto('web_secrets').values({ name, value_sealed: offered, created_at: clock.now().toISOString() })
      .onConflict((oc) => oc.column('name').doNothing()).execute();
    row = await read();
    if (!row) throw new Error(`web secret ${name} was not stored`);
  }
  return Buffer.from(box.open(row.value_sealed), 'base64');
}
