// The module host with test Payment, Notification and Plugin modules: their ModuleJobs on the queue, sealed module_data
// per gateway/channel instance, payment webhooks with the exact raw bytes, Plugin admin routes, activate / deactivate /
// update through the admin API with recorded answers, and one cache per module shared across jobs.
import assert from 'node:assert/strict';
import { storedBytes } from '../../fixtures/platform/stored-bytes.ts';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { pino } from 'pino';
import { config } from '../../../config.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { Task } from '../../../module/task/task.ts';
import { resetSeen, seen, TestMail, testImporter, testModulesConfig, testSignature } from '../../fixtures/platform/modules/test-modules.ts';
import { ledgerOf } from '../../fixtures/platform/ledger.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let dataDir: string;
let platform: Platform;
let app: FastifyInstance;
let token: string;

const PAY_SECRET = 'whsec-Gateway-Secret-8842';
const PAY_KEY = 'sk-live-ApiKey-5531';
const MAIL_PASSWORD = 'Smtp-Channel-Pass-7719';

async function api(method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  const res = await app.inject({ method: method as 'GET', url, payload: payload as string, headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: res.statusCode, body: String(res.headers['content-type'] ?? '').includes('json') ? res.json() : res.body, headers: res.headers, raw: res };
}

async function runJob(input: Record<string, unknown>, queue = 'modules'): Promise<{ status: string; result: unknown; lastError: string | null }> {
  const id = await Task.add('ModuleJob', queue, input, ['hosted-test']);
  const record = await platform.queue.waitFor(id, 15_000);
  return { status: record.status, result: record.result, lastError: record.lastError };
}

before(async () => {
  dataDir = tempDir('module-host');
  platform = await Platform.open({
    dataDir,
    logger: pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' }),
    modulesConfig: testModulesConfig(config),
    importer: testImporter,
    queueOptions: { pollMs: 20 },
  });
  await platform.startWorkers(2);
  app = await buildPlatformApp({ platform });
  token = (await platform.tokens.create('module-host test')).token;
});

after(async () => {
  await app?.close();
  await platform?.close();
  removeDir(dataDir);
});

let gateway: string;
let channel: string;

test('gateway and channel instances: module_data is validated, stored sealed, and answered without its secrets', async () => {
  const pay = await api('POST', '/api/admin/modules/Payment/TestPay/instances', { label: 'Main gateway', module_data: { account_id: ' acct_1 ', api_key: PAY_KEY, webhook_secret: PAY_SECRET, sandbox: 'on' } });
  assert.equal(pay.status, 201, JSON.stringify(pay.body));
  gateway = pay.body.uuid;
  assert.deepEqual(pay.body.module_data, { account_id: 'acct_1', sandbox: true }, 'sanitized by getModuleData, secrets left out');
  assert.deepEqual(pay.body.secret_keys.sort(), ['api_key', 'webhook_secret']);

  const mail = await api('POST', '/api/admin/modules/Notification/TestMail/instances', { label: 'Support mailbox', module_data: { sender: 'support@example.test', password: MAIL_PASSWORD } });
  assert.equal(mail.status, 201);
  channel = mail.body.uuid;

  const read = await api('GET', `/api/admin/module-instances/${gateway}`);
  assert.equal(read.status, 200);
  assert.equal(JSON.stringify(read.body).includes(PAY_KEY), false);
  assert.equal(JSON.stringify(read.body).includes(PAY_SECRET), false);
  const listed = await api('GET', '/api/admin/modules/Payment/TestPay/instances');
  assert.deepEqual(listed.body.instances.map((i: any) => i.label), ['Main gateway']);
  assert.equal('module_data' in listed.body.instances[0], false);

  const renamed = await api('PUT', `/api/admin/module-instances/${gateway}`, { label: 'Gateway A', module_data: { account_id: 'acct_2' } });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.label, 'Gateway A');
  assert.deepEqual(renamed.body.secret_keys.sort(), ['api_key', 'webhook_secret'], 'secrets left out of an update keep their values');
  assert.equal((await platform.moduleInstances.get(gateway))?.module_data.api_key, PAY_KEY);

  assert.equal((await api('POST', '/api/admin/modules/Plugin/TestPlugin/instances', { label: 'x', module_data: {} })).status, 422);
  assert.equal((await api('POST', '/api/admin/modules/Payment/Nope/instances', { label: 'x', module_data: {} })).status, 404);
  assert.equal((await api('GET', '/api/admin/module-instances/00000000-0000-4000-8000-000000000000')).status, 404);

  const file = storedBytes(dataDir);
  for (const secret of [PAY_KEY, PAY_SECRET, MAIL_PASSWORD, 'acct_2', 'support@example.test']) assert.equal(file.includes(secret), false, `${secret} is sealed at rest`);
});

test('Payment and Notification jobs run through the queue, bound to their instance with its opened module_data', async () => {
  resetSeen();
  const rates = await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway }, method: 'lookupRates', args: ['USD'] });
  assert.equal(rates.status, 'completed', String(rates.lastError));
  assert.deepEqual(rates.result, { status: 'success', currency: 'USD', rate: 1.1, account: 'acct_2', key_configured: true });

  const sent = await runJob({ module: { type: 'Notification', name: 'TestMail', payment_gateway_uuid: channel }, method: 'send', args: [{ to: 'client@example.test', subject: 'Invoice', message: 'Paid.' }] }, 'mail');
  assert.equal(sent.status, 'completed', String(sent.lastError));
  assert.deepEqual(seen.mails, [{ channel, sender: 'support@example.test', to: 'client@example.test', subject: 'Invoice' }]);

  const invalid = await runJob({ module: { type: 'Notification', name: 'TestMail', payment_gateway_uuid: channel }, method: 'send', args: [{ to: 'not-an-address', subject: 'x', message: 'y' }], tries: 1 }, 'mail');
  assert.equal(invalid.status, 'failed', 'a validation error answer fails the task');

  const tick = await runJob({ module: { type: 'Plugin', name: 'TestPlugin' }, method: 'tick' });
  assert.equal(tick.status, 'completed');
  assert.deepEqual(tick.result, { status: 'success', ticks: 1 });

  const lifecycle = await runJob({ module: { type: 'Plugin', name: 'TestPlugin' }, method: 'deactivate', tries: 1, maxExceptions: 1 });
  assert.equal(lifecycle.status, 'failed', 'lifecycle methods are not jobs');
  assert.deepEqual(seen.lifecycle, []);
  const wrongGateway = await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: channel }, method: 'lookupRates', args: ['EUR'], tries: 1, maxExceptions: 1 });
  assert.equal(wrongGateway.status, 'failed', "a channel is not the payment module's gateway");
  assert.match(String(wrongGateway.lastError), /module instance not found/);

  const file = storedBytes(dataDir);
  assert.equal(file.includes(PAY_KEY), false, 'the opened key never lands in a task record');
});

test('the module cache is shared by every job of the module and dropped by tag', async () => {
  resetSeen();
  const first = await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway }, method: 'lookupRates', args: ['EUR'] });
  const second = await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway }, method: 'lookupRates', args: ['USD'] });
  assert.equal(first.status, 'completed');
  assert.equal(second.status, 'completed');
  assert.equal(seen.rateComputations, 0, 'computed by the earlier test, still cached (300 s) for these two jobs');
  assert.equal(platform.modules.cache('Payment', 'TestPay').has('TestPay:rates'), true);

  const dropped = await api('DELETE', '/api/admin/modules/Payment/TestPay/cache');
  assert.deepEqual(dropped.body, { dropped: 1 });
  await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway }, method: 'lookupRates', args: ['EUR'] });
  await runJob({ module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway }, method: 'lookupRates', args: ['USD'] });
  assert.equal(seen.rateComputations, 1, 'recomputed once after the invalidation, then shared by the next job');
});

test('a webhook reaches apiWebhookPost with the exact raw bytes and headers, and its answer is returned', async () => {
  resetSeen();
  const raw = Buffer.concat([
    Buffer.from('  {"type" :"payment_intent.succeeded",\r\n\t"amount":  12.50, "note": "caf', 'utf8'),
    Buffer.from([0xc3, 0xa9, 0x20, 0xff]),
    Buffer.from('" }\n\n', 'utf8'),
  ]);
  const res = await app.inject({
    method: 'POST', url: `/webhooks/payment/${gateway}?source=test`, payload: raw,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-test-signature': testSignature(PAY_SECRET, raw), 'x-extra': 'kept' },
  });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.body, 'accepted 12.5');
  assert.equal(res.headers['x-test-gateway'], gateway);
  assert.equal(seen.webhooks.length, 1);
  assert.ok(seen.webhooks[0].rawBody.equals(raw), 'byte for byte');
  assert.equal(seen.webhooks[0].headers['x-extra'], 'kept');
  assert.equal(seen.webhooks[0].gateway, gateway);
  assert.equal(seen.paid.length, 1);

  const tampered = Buffer.from(raw);
  tampered[tampered.length - 3] = 0x20;
  const refused = await app.inject({ method: 'POST', url: `/webhooks/payment/${gateway}`, payload: tampered, headers: { 'content-type': 'application/json', 'x-test-signature': testSignature(PAY_SECRET, raw) } });
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.body, 'Invalid signature');

  const form = Buffer.from('type=x&amount=1');
  const other = await app.inject({ method: 'POST', url: `/webhooks/payment/${gateway}`, payload: form, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-test-signature': testSignature(PAY_SECRET, form) } });
  assert.equal(other.statusCode, 200, 'any content type arrives unparsed; an unhandled type answers ok');
  assert.equal(other.body, 'ok');
  assert.ok(seen.webhooks[2].rawBody.equals(form));

  const get = await app.inject({ method: 'GET', url: `/webhooks/payment/${gateway}` });
  assert.equal(get.statusCode, 200);
  assert.equal(get.body, 'ok');
  assert.equal((await app.inject({ method: 'POST', url: `/webhooks/payment/${channel}`, payload: raw })).statusCode, 404, 'a channel is no gateway');
  assert.equal((await app.inject({ method: 'POST', url: '/webhooks/payment/not-a-uuid', payload: raw })).statusCode, 404);
});

test('Plugin admin routes are mounted under /admin/modules/Plugin/<Name>/ behind admin tokens', async () => {
  const stats = await api('GET', '/admin/modules/Plugin/TestPlugin/stats/42');
  assert.equal(stats.status, 200);
  assert.deepEqual(stats.body, { id: '42', plugin: 'TestPlugin' });
  const echo = await api('POST', '/admin/modules/Plugin/TestPlugin/echo', { a: 1 });
  assert.equal(echo.status, 201);
  assert.deepEqual(echo.body, { echoed: { a: 1 } });
  assert.equal((await api('GET', '/admin/modules/Plugin/TestPlugin/echo')).status, 404, 'method must match');
  assert.equal((await api('GET', '/admin/modules/Plugin/TestPlugin/nope')).status, 404);
  assert.equal((await app.inject({ method: 'GET', url: '/admin/modules/Plugin/TestPlugin/stats/42' })).statusCode, 401);
  const client = await app.inject({ method: 'GET', url: '/client/modules/Plugin/TestPlugin/hello' });
  assert.deepEqual([client.statusCode, client.json()], [200, { hello: 'client' }], "the manifest's client routes are mounted");
});

test('activate / deactivate / update through the admin API: the module methods run and their answers are recorded', async () => {
  resetSeen();
  const off = await api('POST', '/api/admin/modules/Plugin/TestPlugin/deactivate');
  assert.equal(off.status, 200);
  assert.deepEqual(off.body, { module: 'Plugin/TestPlugin', action: 'deactivate', result: 'success' });
  assert.deepEqual(seen.lifecycle, ['TestPlugin.deactivate']);
  assert.equal((await api('GET', '/admin/modules/Plugin/TestPlugin/stats/1')).status, 404, 'a deactivated plugin has no routes');
  const refusedJob = await runJob({ module: { type: 'Plugin', name: 'TestPlugin' }, method: 'tick', tries: 1, maxExceptions: 1 });
  assert.equal(refusedJob.status, 'failed');
  let listed = (await api('GET', '/api/admin/modules')).body.modules.find((m: any) => m.name === 'TestPlugin');
  assert.equal(listed.loaded, false);
  assert.deepEqual({ active: listed.state.active, last_action: listed.state.last_action, last_result: listed.state.last_result }, { active: false, last_action: 'deactivate', last_result: 'success' });

  const on = await api('POST', '/api/admin/modules/Plugin/TestPlugin/activate');
  assert.deepEqual(on.body, { module: 'Plugin/TestPlugin', action: 'activate', result: 'success' });
  assert.equal((await api('GET', '/admin/modules/Plugin/TestPlugin/stats/1')).status, 200);

  await platform.store.db.updateTable('module_versions').set({ version: '1.5.0' }).where('module_type', '=', 'Plugin').where('module_name', '=', 'TestPlugin').execute();
  const updated = await api('POST', '/api/admin/modules/Plugin/TestPlugin/update');
  assert.deepEqual(updated.body, { module: 'Plugin/TestPlugin', action: 'update', result: 'success' });
  assert.deepEqual(seen.lifecycle, ['TestPlugin.deactivate', 'TestPlugin.activate', 'TestPlugin.update from 1.5.0']);
  listed = (await api('GET', '/api/admin/modules')).body.modules.find((m: any) => m.name === 'TestPlugin');
  assert.equal(listed.installed_version, '2.0.0');
  assert.equal(listed.state.last_action, 'update');

  TestMail.refuseDeactivate = true;
  try {
    const refused = await api('POST', '/api/admin/modules/Notification/TestMail/deactivate');
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error, 'Error: mails are still queued');
    assert.equal(refused.body.result, 'Error: mails are still queued');
  } finally {
    TestMail.refuseDeactivate = false;
  }
  const mail = (await api('GET', '/api/admin/modules')).body.modules.find((m: any) => m.name === 'TestMail');
  assert.equal(mail.loaded, true, 'a refused deactivate keeps the module');
  assert.deepEqual({ active: mail.state.active, last_result: mail.state.last_result }, { active: true, last_result: 'Error: mails are still queued' });
  assert.ok((await platform.moduleLogStore.read({ name: 'TestMail', level: 'error' })).some((row) => row.action === 'deactivate'), 'the Error answer is in the module log');
  assert.ok((await platform.moduleLogStore.read({ name: 'TestPlugin', level: 'info' })).some((row) => row.action === 'deactivate' && row.response === 'success'));

  assert.equal((await api('POST', '/api/admin/modules/Plugin/Nope/activate')).status, 404);
  assert.equal((await api('POST', '/api/admin/modules/Plugin/TestPlugin/explode')).status, 404);
});

test('a module plugs in through its manifest: own migration and store, scheduled work, hook listeners, config check', async () => {
  resetSeen();
  const scopes = (await ledgerOf(platform.store, 'module:Payment/TestPay')).map(({ version, name }) => ({ version, name }));
  assert.deepEqual(scopes, [{ version: 1, name: 'ledger' }]);
  const first = await runJob({ module: { type: 'Payment', name: 'TestPay' }, method: 'recordLedger', args: ['one'] });
  const second = await runJob({ module: { type: 'Payment', name: 'TestPay' }, method: 'recordLedger', args: ['two'] });
  assert.deepEqual([first.result, second.result], [{ status: 'success', rows: 1 }, { status: 'success', rows: 2 }]);
  assert.deepEqual((await sql<{ note: string }>`SELECT note FROM test_pay_ledger ORDER BY id`.execute(platform.store.db)).rows, [{ note: 'one' }, { note: 'two' }]);

  await platform.hooks.emit('service.terminated', { service_uuid: 'svc-hooked', module: 'VpnProduct', at: platform.clock.now().toISOString() });
  assert.deepEqual(seen.hooked, ['svc-hooked']);

  assert.equal(seen.beats, 0, 'scheduled work waits for startScheduled (the serving process)');
  await platform.startScheduled();
  const started = Date.now();
  while (seen.beats < 2 && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 20));
  assert.ok(seen.beats >= 2, `beat ran ${seen.beats} times`);

  const badDir = tempDir('module-host-bad-config');
  try {
    const bad = testModulesConfig(config);
    bad.modules.Payment.TestPay = { enabled: true, version: '1.0.0', fee_percent: 500 };
    await assert.rejects(
      Platform.open({ dataDir: badDir, logger: pino({ level: 'silent' }), modulesConfig: bad, importer: testImporter }),
      /config\.ts section of Payment\/TestPay: fee_percent: /,
    );
  } finally {
    removeDir(badDir);
  }
  const after = await runJob({ module: { type: 'Payment', name: 'TestPay' }, method: 'recordLedger', args: ['three'] });
  assert.deepEqual(after.result, { status: 'success', rows: 3 }, 'a failed open leaves the running platform queueing');
});
