// The query layer's PostgreSQL client runs parameterised queries as named prepared statements, and falls back to an
// unnamed run when a prepared `SELECT *` meets a table whose columns changed (outside a transaction; inside, it fails).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createPgPool } from '../../../module/platform/store/query/query-store.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../../helpers/postgres-server.ts';

let server: Promise<PostgresServer> | null = null;
after(async () => (server ? (await server).stop() : undefined));

test('parameterised queries are prepared once per connection; a changed table is read again unnamed outside a transaction', async (t) => {
  if (!requirePostgres(t)) return;
  server ??= startPostgres();
  const pool = createPgPool(await (await server).createDatabase('prepared_client'), 1, undefined, true);
  // Kysely's form: `query(text, values)` on a checked-out client.
  const client = await pool.connect();
  try {
    await client.query('CREATE TABLE items (id integer PRIMARY KEY, name text)');
    await client.query("INSERT INTO items VALUES (1, 'one'), (2, 'two')");
    for (const id of [1, 2, 1]) assert.equal((await client.query('SELECT name FROM items WHERE id = $1', [id])).rows[0].name, id === 1 ? 'one' : 'two');
    const prepared = await client.query("SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT name FROM items%'");
    assert.equal(prepared.rowCount, 1, 'one prepared statement for the three runs');
    assert.deepEqual((await client.query('SELECT * FROM items WHERE id = $1', [1])).rows, [{ id: 1, name: 'one' }]);
    await client.query('ALTER TABLE items ADD COLUMN note text');
    assert.deepEqual((await client.query('SELECT * FROM items WHERE id = $1', [1])).rows, [{ id: 1, name: 'one', note: null }], 'run again unnamed');

    await client.query('SELECT * FROM items WHERE id > $1', [0]);
    await client.query('ALTER TABLE items DROP COLUMN note');
    await client.query('begin', []);
    await assert.rejects(client.query('SELECT * FROM items WHERE id > $1', [0]), { code: '0A000' });
    await client.query('rollback', []);
    assert.equal((await client.query('SELECT * FROM items WHERE id > $1', [0])).rowCount, 2, 'unnamed from then on');
  } finally {
    client.release();
    await pool.end();
  }
});
