// Module logs: stored in module_logs with secrets redacted before storage, mirrored to pino, context merged.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import Database from 'better-sqlite3';
import { createLogModule } from '../../../module/contract/log.ts';
import { runMigrations } from '../../../module/platform/store/migrator.ts';
import { MODULE_LOG_MIGRATIONS } from '../../../module/platform/store/query/repositories/module-logs.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

const SECRETS = {
  password: 'Pw-9f8e7d6c5b',
  secret: 'sec-a1b2c3d4e5',
  token: 'tok-0a9b8c7d6e',
  key: 'key-5f4e3d2c1b',
  access_hash: 'ah-'.padEnd(80, '7'),
  private_key: 'pk-cGF5bG9hZA==',
  api_key: 'api-1234567890',
};

let p: TestPlatform;
beforeEach(() => (p = makePlatform({ config: { enabled: true, version: '1.0.0', api_url: 'https://panel.example', api_key: 'cfg-apikey-777' } })));
afterEach(() => p.cleanup());

/** Every byte of the database file and the pino output. */
function everythingStored(): string {
  p.db.pragma('wal_checkpoint(TRUNCATE)');
  return readFileSync(join(p.dir, 'platform.sqlite')).toString('latin1') + JSON.stringify(p.db.prepare('SELECT * FROM module_logs').all()) + p.logLines.join('');
}

test('the module log migrations are idempotent and adopt a table made before them', async () => {
  const migrate = (db: Database.Database) => runMigrations(db, 'module-logs', MODULE_LOG_MIGRATIONS);
  const db = new Database(':memory:');
  migrate(db);
  migrate(db);
  const other = new Database(':memory:');
  other.exec('CREATE TABLE module_logs (id INTEGER PRIMARY KEY AUTOINCREMENT, module_type TEXT NOT NULL, module_name TEXT NOT NULL, action TEXT NOT NULL, level TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL, context TEXT NOT NULL, created_at TEXT NOT NULL)');
  migrate(other);
  assert.equal((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'module_logs%'").get() as { n: number }).n, 2);
  db.close();
  other.close();
});

test('logModule stores level, action, request, response and context; pino gets the same entry', async () => {
  const logModule = createLogModule({ sink: p.logs, logger: p.ctx.logger, clock: p.clock });
  logModule('Product', 'SampleProduct', 'create', 'info', { service_uuid: 's1' }, 'queued', { request_id: 'r1' });
  const [row] = (await p.logs.read());
  assert.deepEqual({ ...row, id: 0 }, {
    id: 0, module_type: 'Product', module_name: 'SampleProduct', action: 'create', level: 'info',
    request: { service_uuid: 's1' }, response: 'queued', context: { request_id: 'r1' }, created_at: '2026-01-01T00:00:00.000Z',
  });
  const line = JSON.parse(p.logLines.at(-1)!);
  assert.equal(line.level, 30);
  assert.equal(line.action, 'create');
  assert.equal(line.request_id, 'r1');
  assert.throws(() => logModule('Product', 'X', 'a', 'warn' as 'info'), /unknown log level/);
});

test('secrets in request, response, nested members and free text (values the module holds) never reach the table or pino', async () => {
  const product = new SampleProduct(p.ctx);
  product.service_uuid = 'svc-9';
  product.service_data = { username: 'alice', key: SECRETS.key, password: SECRETS.password };
  product.logInfo('create', { ...SECRETS, nested: { list: [{ password: SECRETS.password }] }, username: 'alice' }, { echoed: `login failed for ${SECRETS.password}` });
  product.logError('call', `POST /login password=${SECRETS.password}&token=${SECRETS.token} Authorization: Bearer ${SECRETS.api_key}`, new Error(`bad key ${SECRETS.key}`));
  product.logDebug('config', { header: `api_key: cfg-apikey-777` }, { private_key: SECRETS.private_key, access_hash: SECRETS.access_hash });
  product.logInfo('echo', [], 'the configured key cfg-apikey-777 was rejected');
  const stored = everythingStored();
  for (const value of [...Object.values(SECRETS), 'cfg-apikey-777']) assert.ok(!stored.includes(value), `secret ${value} leaked`);
  const rows = (await p.logs.read({ name: 'SampleProduct' })).reverse();
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.map((r) => r.level), ['info', 'error', 'debug', 'info']);
  assert.equal((rows[0].request as Record<string, unknown>).username, 'alice', 'non-secret members are kept');
  assert.equal((rows[0].request as Record<string, unknown>).password, '[redacted]');
  assert.equal((rows[0].response as Record<string, unknown>).echoed, 'login failed for [redacted]');
  assert.deepEqual(rows[1].response, { name: 'Error', message: 'bad key [redacted]' });
  assert.equal(rows[3].response, 'the configured key [redacted] was rejected');
});

test('logger_context is merged into every entry, with the current service', async () => {
  const product = new SampleProduct(p.ctx);
  product.service_uuid = 'svc-7';
  product.logger_context.request_id = 'req-42';
  product.logInfo('create');
  const [row] = (await p.logs.read());
  assert.deepEqual(row.context, { module_type: 'Product', module_name: 'SampleProduct', request_id: 'req-42', service_uuid: 'svc-7' });
  assert.deepEqual(row.request, []);
  assert.equal((await p.logs.read({ level: 'error' })).length, 0);
});
