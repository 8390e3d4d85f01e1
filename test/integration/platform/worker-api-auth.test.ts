// Worker API authentication: worker-scope bearer tokens only; admin and worker tokens never open each other's API.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { config } from '../../../config.ts';
import { MODULE_TYPES } from '../../../module/contract/platform-context.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { UNAUTHORIZED, WORKER_UNAUTHORIZED } from '../../../module/platform/errors.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir, vpnhostInProcess } from '../../fixtures/platform/processes.ts';

let platform: Platform;
let app: FastifyInstance;
let dataDir: string;
let adminToken: string;
let workerToken: string;

before(async () => {
  dataDir = tempDir('worker-auth');
  platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }) });
  app = await buildPlatformApp({ platform });
  adminToken = (await platform.tokens.create('admin')).token;
  workerToken = (await platform.workerTokens.create('worker')).token;
});

after(async () => {
  await app?.close();
  await platform?.close();
  removeDir(dataDir);
});

const call = (method: 'GET' | 'POST' | 'PUT', url: string, token: string | null, payload?: unknown) =>
  app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, payload: payload as object | undefined });

const WORKER_ROUTES: Array<['GET' | 'POST' | 'PUT', string, unknown?]> = [
  ['GET', '/api/worker/info'],
  ['GET', '/api/worker/tasks/some-id'],
  ['POST', '/api/worker/tasks/some-id/begin', { worker_id: 'w', lease_ms: 1000 }],
  ['POST', '/api/worker/tasks/some-id/settle', { worker_id: 'w', settlement: { status: 'completed', exceptions: 0, lastError: null, result: null, availableAt: 0 } }],
  ['POST', '/api/worker/tasks/release', { worker_id: 'w', ids: ['some-id'] }],
  ['GET', '/api/worker/queues/active'],
  ['GET', '/api/worker/services/some-uuid'],
  ['PUT', '/api/worker/services/some-uuid/provision-status', { status: 'completed' }],
  ['GET', '/api/worker/products/some-uuid'],
  ['GET', '/api/worker/panels/ams'],
  ['POST', '/api/worker/module-logs', { entries: [] }],
  ['GET', '/api/worker/no-such-route'],
];

test('every worker route answers 401 without a token, with a wrong one, a malformed one or an admin token', async () => {
  const wrong = 'vpw_' + '0'.repeat(64);
  for (const token of [null, wrong, 'nonsense', adminToken]) {
    for (const [method, url, body] of WORKER_ROUTES) {
      const res = await call(method, url, token, body);
      assert.equal(res.statusCode, 401, `${method} ${url} with ${token === adminToken ? 'the admin token' : String(token)}`);
      assert.deepEqual(res.json(), { error: WORKER_UNAUTHORIZED });
    }
  }
  const basic = await app.inject({ method: 'GET', url: '/api/worker/info', headers: { authorization: `Basic ${workerToken}` } });
  assert.equal(basic.statusCode, 401);
});

test('a worker token opens the worker API but not the admin API', async () => {
  const info = await call('GET', '/api/worker/info', workerToken);
  assert.equal(info.statusCode, 200);
  // every module config.ts switches on, in the host's type order, with its version
  const enabled = MODULE_TYPES.flatMap((type) => Object.entries(config.modules[type]).filter(([, m]) => m.enabled).map(([name, m]) => ({ type, name, version: m.version })));
  assert.ok(enabled.some((m) => m.name === 'VpnProduct'));
  assert.deepEqual(info.json(), { queue: 'embedded', modules: enabled });
  for (const url of ['/api/admin/panels', '/api/admin/tasks', '/api/admin/products']) {
    const res = await call('GET', url, workerToken);
    assert.equal(res.statusCode, 401, url);
    assert.deepEqual(res.json(), { error: UNAUTHORIZED });
  }
  assert.equal((await call('GET', '/api/admin/panels', adminToken)).statusCode, 200);
  const unknown = await call('GET', '/api/worker/no-such-route', workerToken);
  assert.equal(unknown.statusCode, 404);
});

test('worker routes validate their bodies and answer 404 for unknown records', async () => {
  const badBegin = await call('POST', '/api/worker/tasks/x/begin', workerToken, { worker_id: '', lease_ms: -1 });
  assert.equal(badBegin.statusCode, 400);
  assert.match(badBegin.json().error, /^invalid request/);
  const badStatus = await call('PUT', '/api/worker/services/x/provision-status', workerToken, { status: 'bogus' });
  assert.equal(badStatus.statusCode, 400);
  const badLogs = await call('POST', '/api/worker/module-logs', workerToken, { entries: [] });
  assert.equal(badLogs.statusCode, 400);
  const badInsert = await call('POST', '/api/worker/tasks', workerToken, { backend: 'embedded', job: 'J', queue: 'q', input: {}, tags: [], options: { tries: 1, backoff: 0, timeout: 1, maxExceptions: 1 } });
  assert.equal(badInsert.statusCode, 400, 'a remote worker only inserts BullMQ records');
  for (const url of ['/api/worker/tasks/nope', '/api/worker/services/nope', '/api/worker/products/nope', '/api/worker/panels/nope']) {
    assert.equal((await call('GET', url, workerToken)).statusCode, 404, url);
  }
});

test('a deleted worker token stops working at once', async () => {
  const { id, token } = await platform.workerTokens.create('short-lived');
  assert.equal((await call('GET', '/api/worker/info', token)).statusCode, 200);
  assert.equal(await platform.tokens.delete(id), false, 'the admin scope cannot delete a worker token');
  assert.equal(await platform.workerTokens.delete(id), true);
  assert.equal((await call('GET', '/api/worker/info', token)).statusCode, 401);
});

test('worker-token create prints a vpw_ token; the admin and worker lists keep to their scope', async () => {
  const dir = tempDir('worker-token-cli');
  try {
    const worker = await vpnhostInProcess(['platform', 'worker-token', 'create', '--data', dir, '--comment', 'edge-1']);
    assert.match(worker, /^vpw_[0-9a-f]{64}$/);
    const adminValue = await vpnhostInProcess(['platform', 'admin-token', 'create', '--data', dir, '--comment', 'ops']);
    assert.match(adminValue, /^vpa_[0-9a-f]{64}$/);
    const workers = await vpnhostInProcess(['platform', 'worker-token', 'list', '--data', dir]);
    const admins = await vpnhostInProcess(['platform', 'admin-token', 'list', '--data', dir]);
    assert.match(workers, /\tedge-1$/);
    assert.doesNotMatch(workers, /ops/);
    assert.match(admins, /\tops$/);
    assert.doesNotMatch(admins, /edge-1/);
    assert.ok(!workers.includes(worker) && !admins.includes(adminValue), 'lists never show token values');
  } finally {
    removeDir(dir);
  }
});
