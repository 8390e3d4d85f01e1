// Payment and Notification jobs in a remote worker (BullMQ on a real Redis, no data directory, no database handle):
// the gateway/channel instance's opened module_data comes through the worker API, results reach the platform. Then the
// real Smtp module with no job slot on the platform: deliveries, `send` and message events (invoice issued, password
// reset) run in the remote worker, reach a real SMTP server (STARTTLS + AUTH) and are recorded on the platform.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { config } from '../../config.ts';
import type { InvoiceEvent } from '../../hooks.ts';
import { smtpServices } from '../../module/modules/Notification/Smtp/index.ts';
import type { Smtp } from '../../module/modules/Notification/Smtp/smtp.ts';
import { buildPlatformApp } from '../../module/platform/app.ts';
import { Platform } from '../../module/platform/platform.ts';
import { startRemoteWorker } from '../../module/platform/remote-worker.ts';
import { CustomerQueries } from '../../module/platform/store/query/repositories/customers.ts';
import { FINAL_STATUSES } from '../../module/task/queue.ts';
import { admin, until } from '../fixtures/platform/http.ts';
import { seen, resetSeen, testImporter, testModulesConfig } from '../fixtures/platform/modules/test-modules.ts';
import { removeDir, startRedis, stopOnFailure, tempDir } from '../fixtures/platform/processes.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { quickSmtpConfig, startSmtpServer } from '../integration/smtp/smtp-fixture.ts';

/** The platform's app on a loopback port, with an admin and a worker token. */
async function servePlatform(platform: Platform): Promise<{ url: string; adminToken: string; workerToken: string; close(): Promise<void> }> {
  const app = await buildPlatformApp({ platform });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    adminToken: (await platform.tokens.create('remote test')).token,
    workerToken: (await platform.workerTokens.create('remote worker')).token,
    close: () => app.close(),
  };
}

test('a remote worker runs Payment and Notification jobs bound to their instances through the worker API', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const dataDir = tempDir('remote-hosted');
  const logger = pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' });
  const modulesConfig = testModulesConfig(config);
  const prefix = `hosted${process.pid}`;
  let platform: Platform | null = null;
  let closeApp: (() => Promise<void>) | null = null;
  let worker: Awaited<ReturnType<typeof startRemoteWorker>> | null = null;
  try {
    platform = await Platform.open({ dataDir, logger, queue: redis.url, modulesConfig, importer: testImporter, queueOptions: { prefix } });
    const served = await servePlatform(platform);
    closeApp = served.close;
    const { url, adminToken, workerToken } = served;

    const gateway = await admin(url, adminToken, 'POST', '/modules/Payment/TestPay/instances', { label: 'Remote gateway', module_data: { account_id: 'acct_remote', api_key: 'sk-remote-4411', webhook_secret: 'whsec-remote' } });
    assert.equal(gateway.status, 201);
    const channel = await admin(url, adminToken, 'POST', '/modules/Notification/TestMail/instances', { label: 'Remote mail', module_data: { sender: 'remote@example.test', password: 'Remote-mail-pass-1' } });
    assert.equal(channel.status, 201);

    resetSeen();
    worker = await startRemoteWorker({ platformUrl: url, token: workerToken, queue: redis.url, workers: 2, logger, modulesConfig, importer: testImporter, queueOptions: { prefix } });
    const rates = await platform.queue.add('ModuleJob', 'payments', { module: { type: 'Payment', name: 'TestPay', payment_gateway_uuid: gateway.body.uuid }, method: 'lookupRates', args: ['USD'] }, ['remote-hosted'], {});
    const mail = await platform.queue.add('ModuleJob', 'mail', { module: { type: 'Notification', name: 'TestMail', payment_gateway_uuid: channel.body.uuid }, method: 'send', args: [{ to: 'client@example.test', subject: 'Remote', message: 'Hello' }] }, ['remote-hosted'], {});
    const rateTask = await platform.queue.waitFor(rates.id, 30_000);
    const mailTask = await platform.queue.waitFor(mail.id, 30_000);
    assert.equal(rateTask.status, 'completed', String(rateTask.lastError));
    assert.deepEqual(rateTask.result, { status: 'success', currency: 'USD', rate: 1.1, account: 'acct_remote', key_configured: true });
    assert.equal(mailTask.status, 'completed', String(mailTask.lastError));
    assert.deepEqual(seen.mails, [{ channel: channel.body.uuid, sender: 'remote@example.test', to: 'client@example.test', subject: 'Remote' }]);
  } finally {
    await worker?.close(2_000);
    await closeApp?.();
    await platform?.close(2_000);
    await redis.stop();
    removeDir(dataDir);
  }
});

test('Smtp jobs run in a remote worker only: a delivery, a send and message events reach a real SMTP server, recorded sent on the platform', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const redis = await startRedis();
  const server = await startSmtpServer().catch(stopOnFailure(redis));
  const dataDir = tempDir('remote-smtp');
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const modulesConfig = quickSmtpConfig(2);
  const prefix = `smtp${process.pid}`;
  const token = 'v1.RemoteResetToken-7710.Sig-3392';
  let platform: Platform | null = null;
  let closeApp: (() => Promise<void>) | null = null;
  let worker: Awaited<ReturnType<typeof startRemoteWorker>> | null = null;
  try {
    // No job slot on the platform (as `platform serve --workers 0`): only the remote worker can take a job.
    platform = await Platform.open({ dataDir, logger, queue: redis.url, modulesConfig, queueOptions: { prefix }, moduleWatchMs: 0 });
    const served = await servePlatform(platform);
    closeApp = served.close;
    const { url, adminToken, workerToken } = served;
    const channel = await admin(url, adminToken, 'POST', '/modules/Notification/Smtp/instances', {
      label: 'Remote SMTP', module_data: { host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: server.password, sender: 'billing@vpn.example', ca: server.cert },
    });
    assert.equal(channel.status, 201, JSON.stringify(channel.body));
    worker = await startRemoteWorker({ platformUrl: url, token: workerToken, queue: redis.url, workers: 2, logger: logger.child({ side: 'worker' }), modulesConfig, queueOptions: { prefix } });
    const store = smtpServices(platform.modules).smtpSends!;
    const opened = (await platform.moduleInstances.get(channel.body.uuid))!;
    const smtp = platform.modules.instance<Smtp>('Notification', 'Smtp', { payment_gateway_uuid: opened.uuid, module_data: opened.module_data });

    // 1. A send recorded on the platform; its deliverJob taken by the remote worker.
    const queued = await smtp.send({ to: 'ada@customer.example', subject: 'Remote delivery', message: 'Delivered by a remote worker.' });
    assert.equal(queued.status, 'success', JSON.stringify(queued));
    const delivery = await platform.queue.waitFor((queued as { task_id: string }).task_id, 30_000);
    assert.equal(delivery.status, 'completed', String(delivery.lastError));
    await server.waitForMails(1);
    const first = (await store.get((queued as { send_uuid: string }).send_uuid))!;
    assert.deepEqual([first.status, first.attempts, first.server_reply], ['sent', 1, '250 Message queued as test-1']);

    // 2. The spec's `send` as a job of the remote worker: recorded and queued through the worker routes, delivered there.
    const hosted = await platform.queue.add('ModuleJob', 'notifications', { module: { type: 'Notification', name: 'Smtp', payment_gateway_uuid: opened.uuid }, method: 'send', args: [{ to: 'bo@customer.example', subject: 'Hosted send', message: '<p>Sent <b>remotely</b></p>' }] }, ['remote-smtp'], {});
    const hostedTask = await platform.queue.waitFor(hosted.id, 30_000);
    assert.equal(hostedTask.status, 'completed', String(hostedTask.lastError));
    const hostedSend = (hostedTask.result as { send_uuid?: string }).send_uuid;
    assert.ok(hostedSend);
    await server.waitForMails(2);
    await until(async () => ((await store.get(hostedSend))?.status === 'sent' ? true : undefined), 30_000);

    // 3. Message events: the listener queues messageJob; the remote worker has the platform plan it, renders, records.
    const customer = await new CustomerQueries(platform.store).create({ email: 'cy@customer.example', name: 'Cy' });
    const invoice: InvoiceEvent = {
      invoice_uuid: 'c0ffee00-0000-4000-8000-0000000000aa', invoice_number: 'INV-2026-000042', customer_uuid: customer.uuid, service_uuid: null,
      product_uuid: null, module: null, amount: '7.00', amount_minor: 700, currency: 'EUR', due_date: '2026-12-10', at: '2026-11-23T16:00:00.000Z',
    };
    await platform.hooks.emit('invoice.created', invoice);
    await platform.hooks.emit('customer.password_reset', {
      customer_uuid: customer.uuid, service_uuid: null, product_uuid: null, module: null, email: customer.email,
      reset_path: `/client/password/reset?token=${token}`, expires_at: '2026-11-23T17:00:00.000Z', at: '2026-11-23T16:01:00.000Z',
    });
    await server.waitForMails(4, 30_000);
    const bySubject = new Map(server.received.map((m, i) => [m.subject, { mail: m, rcpt: server.envelopes[i] }]));
    assert.deepEqual(bySubject.get('Invoice INV-2026-000042: 7.00 EUR due 2026-12-10')?.rcpt, ['cy@customer.example']);
    assert.match(String(bySubject.get('Reset your vpnhost password')?.mail.text), new RegExp(`token=${token.replace(/\./g, '\\.')}`));
    const events = await until(async () => {
      const list = (await store.list({ limit: 100 })).filter((s) => s.customer_uuid === customer.uuid);
      return list.length === 2 && list.every((s) => s.status === 'sent') ? list : undefined;
    }, 30_000);
    assert.deepEqual(events.map((s) => s.event).sort(), ['customer.password_reset', 'invoice.created']);
    // the worker records a send as sent before it reports its task done: wait for the reports, then nothing may have failed
    const messageTasks = await until(async () => {
      const tasks = await platform!.queue.list({ tag: 'notification' });
      return tasks.every((task) => FINAL_STATUSES.includes(task.status)) ? tasks : undefined;
    }, 30_000);
    assert.ok(messageTasks.every((task) => task.status === 'completed'), JSON.stringify(messageTasks.map((task) => [task.status, task.lastError])));
    t.diagnostic(`${messageTasks.length} Smtp tasks completed, all by the remote worker; ${server.received.length} mails received`);

    // 4. Every job ran in the remote worker: its module log entries reached the platform through the worker API.
    await worker.close(2_000);
    worker = null;
    const sendLogs = (await platform.moduleLogStore.read({ name: 'Smtp', limit: 100 })).filter((r) => r.action === 'send' && (r.response as { status?: string } | null)?.status === 'sent');
    assert.equal(sendLogs.length, 4, 'four deliveries logged');
    assert.equal(server.received.length, 4, 'each mail once');
    assert.ok(server.authOverTls.every(Boolean) && server.authOverTls.length === 4, 'AUTH over STARTTLS every time');
    const everything = lines.join('\n') + JSON.stringify((await platform.moduleLogStore.read({ limit: 1000 })));
    for (const secret of [token, server.password, workerToken, 'Delivered by a remote worker.']) {
      assert.equal(everything.includes(secret), false, 'no secret or mail body in any log');
    }
  } finally {
    await worker?.close(2_000);
    await closeApp?.();
    await platform?.close(2_000);
    await server.close();
    await redis.stop();
    removeDir(dataDir);
  }
});
