// Payment and Notification jobs in a remote worker (BullMQ on a real Redis, no data directory, no database handle):
// the gateway/channel instance's opened module_data comes through the worker API, results reach the platform.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { config } from '../../config.ts';
import { buildPlatformApp } from '../../module/platform/app.ts';
import { Platform } from '../../module/platform/platform.ts';
import { startRemoteWorker } from '../../module/platform/remote-worker.ts';
import { admin } from '../fixtures/platform/http.ts';
import { seen, resetSeen, testImporter, testModulesConfig } from '../fixtures/platform/modules/test-modules.ts';
import { removeDir, startRedis, tempDir } from '../fixtures/platform/processes.ts';
import { requireTools } from '../helpers/require-tools.ts';

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
    const app = await buildPlatformApp({ platform });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closeApp = () => app.close();
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const adminToken = platform.tokens.create('hosted test').token;
    const workerToken = platform.workerTokens.create('hosted worker').token;

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
