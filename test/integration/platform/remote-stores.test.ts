// The HTTP twins of the platform store (task records, services, products, panels, module logs) against a real
// platform over loopback, and the client's refusal of wrong answers; the remote worker's start-up checks.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { config } from '../../../config.ts';
import { createLogModule } from '../../../module/contract/log.ts';
import { systemClock } from '../../../module/contract/platform-context.ts';
import { REDACTED } from '../../../module/contract/redact.ts';
import { NO_PANEL_LOCATIONS, PanelRegistry, UNKNOWN_PANEL } from '../../../module/modules/Product/VpnProduct/panel-registry.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { moduleWorkerCall, PLATFORM_NOT_BULLMQ, startRemoteWorker, TOKEN_REFUSED, VERSION_MISMATCH } from '../../../module/platform/remote-worker.ts';
import { WORKER_API_BAD_ANSWER, WORKER_API_UNREACHABLE, WorkerApiClient, WorkerApiError } from '../../../module/platform/worker-api/client.ts';
import { RemoteModuleLogSink } from '../../../module/platform/worker-api/remote-module-logs.ts';
import { RemotePanelDirectory } from '../../../module/modules/Product/VpnProduct/remote-panels.ts';
import { vpnProductServices } from '../../../module/modules/Product/VpnProduct/index.ts';
import { RemoteProductDirectory } from '../../../module/platform/worker-api/remote-products.ts';
import { RemoteServiceRepository } from '../../../module/platform/worker-api/remote-services.ts';
import { NOT_FOR_REMOTE_WORKERS, RemoteTaskStore } from '../../../module/platform/worker-api/remote-task-store.ts';
import { LOST_WORKER_ERROR } from '../../../module/task/attempt.ts';
import { BLOCKED, type ClaimedTask } from '../../../module/task/task-record-store.ts';
import { freePort, removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { storedBytes } from '../../fixtures/platform/stored-bytes.ts';

// The platform names a Redis queue but is never asked to reach it: no task is added through its queue here.
const UNUSED_REDIS = 'redis://127.0.0.1:9';
const OPTIONS = { tries: 3, backoff: 0, timeout: 5, maxExceptions: 3 };
const silent = pino({ level: 'silent' });

let platform: Platform;
let app: FastifyInstance;
let dataDir: string;
let url: string;
let token: string;
let api: WorkerApiClient;

before(async () => {
  dataDir = tempDir('remote-stores');
  platform = await Platform.open({ dataDir, queue: UNUSED_REDIS, logger: silent });
  app = await buildPlatformApp({ platform });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  token = (await platform.workerTokens.create('remote-stores')).token;
  api = new WorkerApiClient({ url, token, connections: 4, requestTimeoutMs: 10_000 });
});

after(async () => {
  await api?.close();
  await app?.close();
  await platform?.close();
  removeDir(dataDir);
});

test('RemoteTaskStore: insert, begin, settle, release and fail decide exactly as the SQLite store', async () => {
  const store = new RemoteTaskStore(api);
  const input = { module: { type: 'Product', name: 'VpnProduct', service_uuid: 's-1' }, method: 'createJob', password: 'hunter2-remote' };
  const added = await store.insert({ backend: 'bullmq', job: 'ModuleJob', queue: 'Module', input, tags: ['create', 'service:s-1'], options: OPTIONS });
  assert.equal(added.status, 'pending');
  assert.deepEqual(await store.insert({ backend: 'bullmq', job: 'ModuleJob', queue: 'Module', input, tags: ['service:s-1', 'create'], options: OPTIONS }), {
    id: (await platform.taskStore.list({ status: 'duplicate' }))[0].id, status: 'duplicate',
  });
  await assert.rejects(Promise.resolve(store.insert({ backend: 'embedded', job: 'J', queue: 'q', input: {}, tags: [], options: OPTIONS })), { message: NOT_FOR_REMOTE_WORKERS('the embedded queue') });
  assert.deepEqual(await store.activeQueues('bullmq'), ['Module']);

  const record = await store.get(added.id);
  assert.equal(record?.status, 'pending');
  assert.equal(record?.input.password, REDACTED, 'the record shows redacted input');
  assert.deepEqual(record, await platform.taskStore.get(added.id), 'same record as the platform reads');
  assert.equal(await store.get('no-such-task'), null);

  const begin = async (id: string, worker: string) => {
    const answer = await store.beginAttempt(id, worker, 60_000);
    assert.notEqual(answer, BLOCKED);
    return answer as ClaimedTask | null;
  };
  const claimed = await begin(added.id, 'worker-a');
  assert.equal(claimed?.record.status, 'processing');
  assert.equal(claimed?.record.attempts, 1);
  assert.equal(claimed?.rawInput.password, 'hunter2-remote', 'the claim carries the raw input');
  const failedAttempt = { status: 'pending' as const, exceptions: 1, lastError: 'panel said hunter2-remote is wrong', result: null, availableAt: Date.now() };
  assert.equal(await store.settle(added.id, 'worker-b', failedAttempt), null, 'another worker cannot settle it');
  const settled = await store.settle(added.id, 'worker-a', failedAttempt);
  assert.equal(settled?.status, 'pending');
  assert.equal(settled?.lastError, `panel said ${REDACTED} is wrong`, 'secrets of the input are cut out of the error');

  assert.equal((await begin(added.id, 'worker-a'))?.record.attempts, 2);
  assert.deepEqual(await store.release('bullmq', { workerId: 'worker-b', ids: [added.id] }), []);
  assert.deepEqual(await store.release('bullmq', { workerId: 'worker-a', ids: [added.id] }), [added.id]);
  const released = await store.get(added.id);
  assert.equal(released?.status, 'pending');
  assert.equal(released?.lastError, LOST_WORKER_ERROR);

  await store.beginAttempt(added.id, 'worker-c', 60_000);
  const done = await store.settle(added.id, 'worker-c', { status: 'completed', exceptions: 1, lastError: null, result: { status: 'success' }, availableAt: Date.now() });
  assert.equal(done?.status, 'completed');
  assert.deepEqual(done?.result, { status: 'success' });
  assert.equal(await store.beginAttempt(added.id, 'worker-c', 60_000), null, 'a final record is not begun again');
  assert.equal(await store.fail(added.id, 'late'), null, 'a final record is not failed');

  const first = await store.insert({ backend: 'bullmq', job: 'ModuleJob', queue: 'Module', input: { n: 'create' }, tags: ['create', 'service:s-2'], options: OPTIONS });
  const second = await store.insert({ backend: 'bullmq', job: 'ModuleJob', queue: 'Module', input: { n: 'termination' }, tags: ['termination', 'service:s-2'], options: OPTIONS });
  assert.equal(await store.beginAttempt(second.id, 'worker-d', 60_000), BLOCKED, 'a later task of the service waits for the earlier one');
  assert.equal((await store.get(second.id))?.attempts, 0);
  assert.equal((await begin(first.id, 'worker-d'))?.record.status, 'processing');
  assert.equal(await store.beginAttempt(second.id, 'worker-d', 60_000), BLOCKED, 'also while the earlier one runs');
  await store.settle(first.id, 'worker-d', { status: 'completed', exceptions: 0, lastError: null, result: null, availableAt: Date.now() });
  assert.equal((await begin(second.id, 'worker-d'))?.record.status, 'processing');

  const other = await store.insert({ backend: 'bullmq', job: 'ModuleJob', queue: 'Module', input: { n: 2 }, tags: [], options: OPTIONS });
  assert.equal((await store.fail(other.id, 'Task could not be queued: down'))?.status, 'failed');
  await assert.rejects(Promise.resolve(store.list()), { message: NOT_FOR_REMOTE_WORKERS('listing tasks') });
  await assert.rejects(Promise.resolve(store.resetForRetry()), { message: NOT_FOR_REMOTE_WORKERS('retrying a task') });
  await assert.rejects(Promise.resolve(store.release('bullmq', { expired: true })), { message: NOT_FOR_REMOTE_WORKERS('releasing expired leases') });
});

test('RemoteServiceRepository, RemoteProductDirectory and RemotePanelDirectory read and write the platform store', async () => {
  const accessHash = 'a'.repeat(80);
  await vpnProductServices(platform.modules).panelStore!.upsert({ location: 'ams', api_url: 'http://127.0.0.1:1', access_hash: accessHash });
  const product = await platform.ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 20 });
  const created = await platform.ops.createService(product.uuid, { username: 'remote_user', password: 'Remote-pass-123' });

  const services = new RemoteServiceRepository(api);
  const service = await services.get(created.uuid);
  assert.equal(service?.service_data.password, 'Remote-pass-123', 'the worker gets the opened service secret');
  assert.equal(service?.product_uuid, product.uuid);
  assert.equal(await services.get('no-such-service'), null);

  await services.setProvisionStatus(created.uuid, 'failed', 'panel down');
  assert.equal((await platform.services.get(created.uuid))?.provision_status, 'failed');
  assert.equal((await platform.services.get(created.uuid))?.status_reason, 'panel down');
  await services.setProvisionStatus(created.uuid, 'completed');
  assert.equal((await platform.services.get(created.uuid))?.status_reason, null, 'no reason clears it');
  await services.saveProvisionData(created.uuid, { account_name: 'svc-1', password: 'provisioned-secret' });
  assert.deepEqual((await platform.services.get(created.uuid))?.provision_data, { account_name: 'svc-1', password: 'provisioned-secret' });
  await services.saveServiceData(created.uuid, { username: 'remote_user', password: 'Changed-pass-456' });
  assert.equal((await services.get(created.uuid))?.service_data.password, 'Changed-pass-456');
  const file = storedBytes(dataDir);
  for (const secret of ['provisioned-secret', 'Changed-pass-456']) assert.equal(file.includes(secret), false, `${secret} is sealed at rest`);

  const products = new RemoteProductDirectory(api);
  assert.deepEqual(await products.get(product.uuid), (await platform.products.get(product.uuid)));
  assert.equal(await products.get('no-such-product'), null);

  const panels = new RemotePanelDirectory(moduleWorkerCall(api, 'Product', 'VpnProduct'));
  assert.deepEqual(await panels.connection('ams'), { api_url: 'http://127.0.0.1:1', access_hash: accessHash });
  assert.equal(await panels.connection('nowhere'), null);
  const registry = new PanelRegistry(panels);
  try {
    const [one, two] = await Promise.all([registry.client('ams'), registry.client('ams')]);
    assert.equal(one, two, 'concurrent lookups share one client');
    await assert.rejects(registry.client('nowhere'), { message: UNKNOWN_PANEL('nowhere') });
    await assert.rejects(registry.locations(), { message: NO_PANEL_LOCATIONS });
  } finally {
    await registry.close();
  }
});

test('RemoteModuleLogSink delivers scrubbed entries in batches to module_logs', async () => {
  const scratch = new Database(':memory:');
  const sink = new RemoteModuleLogSink(api, silent, { batch: 3, flushMs: 50 });
  try {
    const log = createLogModule({ sink, logger: silent, clock: systemClock });
    for (let i = 0; i < 7; i++) {
      log('Product', 'RemoteLogTest', 'createJob', i === 6 ? 'error' : 'info', { n: i, password: 'log-secret-789' }, { echoed: 'got log-secret-789' }, { service_uuid: 's' });
    }
    await sink.close();
    const rows = (await platform.moduleLogStore.read({ name: 'RemoteLogTest', limit: 100 }));
    assert.equal(rows.length, 7);
    assert.deepEqual(rows.map((r) => (r.request as { n: number }).n).sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(rows[0].level, 'error');
    assert.deepEqual(rows[0].request, { n: 6, password: REDACTED });
    assert.deepEqual(rows[0].response, { echoed: `got ${REDACTED}` });
    assert.equal(rows[0].context.service_uuid, 's');
    assert.equal(scratch.prepare("SELECT name FROM sqlite_master WHERE name = 'module_logs'").get(), undefined, 'nothing is written locally');
  } finally {
    scratch.close();
  }
});

test('RemoteModuleLogSink keeps entries while the platform refuses them and delivers each once, oldest dropped past the cap', async () => {
  const received: number[] = [];
  let refuse = true;
  const fake: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (refuse) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"busy"}');
      for (const entry of (JSON.parse(body) as { entries: Array<{ request: { n: number } }> }).entries) received.push(entry.request.n);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const client = new WorkerApiClient({ url: `http://127.0.0.1:${(fake.address() as { port: number }).port}`, token, requestTimeoutMs: 5_000 });
  const errors: string[] = [];
  const sink = new RemoteModuleLogSink(client, { error: (_obj, msg) => errors.push(msg) }, { batch: 2, flushMs: 60_000, maxBuffered: 4 });
  const entry = (n: number) => ({ module_type: 'Product', module_name: 'X', action: 'a', level: 'info' as const, request: { n }, response: null, context: {}, created_at: new Date().toISOString() });
  try {
    for (let n = 0; n < 6; n++) sink.write(entry(n));
    await sink.flush();
    assert.deepEqual(received, []);
    assert.ok(errors.includes('module log entries not delivered yet'));
    refuse = false;
    await sink.close();
    assert.deepEqual(received, [2, 3, 4, 5], 'the two oldest were dropped at the cap of 4, the rest delivered once, in order');
    assert.ok(errors.includes('module log entries dropped while the platform was unreachable'));
  } finally {
    await client.close();
    await new Promise((resolve) => fake.close(resolve));
  }
});

test('the client refuses bodies that do not match the schema, reports errors and never echoes the token', async () => {
  const answers: Record<string, [number, string]> = {
    '/prefix/api/worker/tasks/shape': [200, JSON.stringify({ id: 5 })],
    '/prefix/api/worker/tasks/text': [200, 'not json'],
    '/prefix/api/worker/tasks/boom': [500, JSON.stringify({ error: 'internal error' })],
  };
  const seen: string[] = [];
  const fake: Server = createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    const [status, body] = answers[req.url ?? ''] ?? [404, '{"error":"not found"}'];
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}/prefix/`;
  const client = new WorkerApiClient({ url: fakeUrl, token, requestTimeoutMs: 5_000 });
  const store = new RemoteTaskStore(client);
  try {
    const failures: Error[] = [];
    for (const id of ['shape', 'text', 'boom']) failures.push(await store.get(id).then(() => assert.fail(`${id} accepted`), (e: Error) => e));
    assert.match(failures[0].message, new RegExp(`^${WORKER_API_BAD_ANSWER} for GET /tasks/shape: `));
    assert.equal(failures[1].message, `${WORKER_API_BAD_ANSWER} for GET /tasks/text: not JSON`);
    assert.ok(failures[2] instanceof WorkerApiError && failures[2].status === 500);
    assert.equal(failures[2].message, 'GET /tasks/boom: 500 internal error');
    assert.equal(await store.get('missing'), null, 'a 404 is an unknown record');
    assert.ok(seen.every((header) => header === `Bearer ${token}`));
    for (const failure of failures) assert.equal(failure.message.includes(token), false);
  } finally {
    await client.close();
    await new Promise((resolve) => fake.close(resolve));
  }
  const port = await freePort();
  const down = new WorkerApiClient({ url: `http://127.0.0.1:${port}`, token, connectTimeoutMs: 2_000 });
  try {
    await assert.rejects(new RemoteTaskStore(down).get('x'), (e: Error) => e.message.startsWith(`${WORKER_API_UNREACHABLE}: GET /tasks/x`));
  } finally {
    await down.close();
  }
  assert.throws(() => new WorkerApiClient({ url, token: 'vpa_' + '0'.repeat(64) }), /worker token/);
});

test('a remote worker refuses to start on a wrong token, an embedded platform or another module version', async () => {
  await assert.rejects(startRemoteWorker({ platformUrl: url, token: 'vpw_' + '1'.repeat(64), queue: UNUSED_REDIS, logger: silent }), { message: TOKEN_REFUSED });
  const other = tempDir('remote-embedded');
  const embedded = await Platform.open({ dataDir: other, logger: silent });
  const embeddedApp = await buildPlatformApp({ platform: embedded });
  try {
    await embeddedApp.listen({ host: '127.0.0.1', port: 0 });
    const embeddedUrl = `http://127.0.0.1:${(embeddedApp.server.address() as { port: number }).port}`;
    const embeddedToken = (await embedded.workerTokens.create('x')).token;
    await assert.rejects(startRemoteWorker({ platformUrl: embeddedUrl, token: embeddedToken, queue: UNUSED_REDIS, logger: silent }), { message: PLATFORM_NOT_BULLMQ });
  } finally {
    await embeddedApp.close();
    await embedded.close();
    removeDir(other);
  }
  const newer = { modules: { ...config.modules, Product: { VpnProduct: { ...config.modules.Product.VpnProduct, version: '9.9.9' } } } };
  await assert.rejects(startRemoteWorker({ platformUrl: url, token, queue: UNUSED_REDIS, logger: silent, modulesConfig: newer }), {
    message: VERSION_MISMATCH('Product/VpnProduct', '9.9.9', '1.0.0'),
  });
});
