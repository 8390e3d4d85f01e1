// Remote BullMQ workers: a platform process (API only, `--workers 0`) and two worker processes WITHOUT its data
// directory, each in its own empty directory, sharing one Redis; every store operation goes through the worker API.
// One worker is SIGKILLed mid-run; every service still completes with exactly one panel account. Then an order's
// invoice e-mail is planned, rendered and delivered by the surviving remote worker to a real SMTP server.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINAL_STATUSES, type TaskStatus } from '../../module/task/queue.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { admin, panel, until } from '../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, startPanel, startRedis, tempDir, vpnhost, type Child } from '../fixtures/platform/processes.ts';
import { readStore } from '../fixtures/platform/read-store.ts';
import { createServer } from '../fixtures/platform/setup.ts';
import { startSlowProxy } from '../fixtures/platform/slow-proxy.ts';
import { startSmtpServer } from '../integration/smtp/smtp-fixture.ts';

const SERVICES = 50;
const TUNING = { VPNHOST_PLATFORM_LOCK_MS: '2000', VPNHOST_LOG_LEVEL: 'info' };
const PASSWORD = (i: number) => `Remote-secret-${i}x`;

test('two remote workers without the data directory provision 50 services; one SIGKILLed mid-run, all complete; an invoice mail goes out through the survivor', async (t) => {
  if (!requireTools(t, ['redis-server'])) return;
  const children: Child[] = [];
  const dirs: string[] = [];
  const dir = (prefix: string) => {
    const made = tempDir(prefix);
    dirs.push(made);
    return made;
  };
  const stops: Array<() => Promise<void>> = []; // what was started, stopped in reverse order even when a start fails
  try {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const smtp = await startSmtpServer();
    stops.push(() => smtp.close());
    const p = await startPanel({ accounts: 200 });
    dirs.push(p.dataDir);
    stops.push(() => p.stop());
    const proxy = await startSlowProxy(p.url);
    stops.push(() => proxy.close());
    await createServer(p, 'main', '10.79.0.1/22');
    const dataDir = dir('platform-remote');
    const adminToken = await vpnhost(['platform', 'admin-token', 'create', '--data', dataDir, '--comment', 'remote test']);
    const workerToken = await vpnhost(['platform', 'worker-token', 'create', '--data', dataDir, '--comment', 'remote workers']);
    assert.match(workerToken, /^vpw_[0-9a-f]{64}$/);
    const port = await freePort();
    const api = await spawnVpnhost(
      ['platform', 'serve', '--listen', `127.0.0.1:${port}`, '--data', dataDir, '--queue', redis.url, '--workers', '0'],
      /platform listening on (http:\/\/\S+)/, TUNING,
    );
    children.push(api);

    // Each worker runs in its own empty directory, with VPNHOST_PLATFORM_DATA naming a directory that must never appear.
    const workerDirs = [dir('remote-worker-a'), dir('remote-worker-b')];
    const forbiddenData = join(dir('remote-guard'), 'data');
    const remoteArgs = ['platform', 'worker', '--queue', redis.url, '--platform-url', api.url, '--workers', '4'];
    const workers = [
      await spawnVpnhost([...remoteArgs, '--token', workerToken], /platform worker (started)/, { ...TUNING, VPNHOST_PLATFORM_DATA: forbiddenData }, 60_000, workerDirs[0]),
      await spawnVpnhost(remoteArgs, /platform worker (started)/, { ...TUNING, VPNHOST_PLATFORM_TOKEN: workerToken, VPNHOST_PLATFORM_DATA: forbiddenData }, 60_000, workerDirs[1]),
    ];
    children.push(...workers);
    for (const worker of workers) assert.match(worker.output(), /remote via http:\/\/127\.0\.0\.1:\d+/);

    const call = (method: string, path: string, body?: unknown) => admin(api.url, adminToken, method, path, body);
    assert.equal((await call('POST', '/panels', { location: 'lab', api_url: proxy.url, access_hash: p.accessHash })).status, 201);
    const product = await call('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'lab', plan_type: 'basic', bandwidth: 30 } });
    assert.equal(product.status, 201);
    const uuids: string[] = [];
    for (let i = 0; i < SERVICES; i++) {
      const svc = await call('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: `remote_${i}`, password: PASSWORD(i) } });
      assert.equal(svc.status, 201);
      uuids.push(svc.body.uuid);
    }
    await Promise.all(uuids.map(async (uuid) => assert.deepEqual((await call('POST', `/services/${uuid}/create`)).body, { status: 'success' })));

    // Worker A is killed while it provably holds a create attempt: frozen (SIGSTOP) so it cannot settle, then the
    // platform's records must show an attempt in A's name before the SIGKILL; otherwise A goes on and we look again.
    const workerA = /as worker (\S+)/.exec(workers[0].output())?.[1];
    assert.ok(workerA, 'worker A printed its id');
    const heldByA = () => readStore(dataDir, async (store) => (await store.db.selectFrom('tasks').select('id')
      .where('status', '=', 'processing').where('worker_id', '=', workerA).execute()).map((row) => String(row.id)));
    const held = await until(async () => {
      if (proxy.answered() < 10) return undefined;
      workers[0].proc.kill('SIGSTOP');
      const ids = await heldByA();
      if (ids.length > 0) return ids;
      workers[0].proc.kill('SIGCONT');
      return undefined;
    }, 60_000, 50);
    await workers[0].kill();
    const killedAfter = proxy.answered();
    t.diagnostic(`worker A SIGKILLed after ${killedAfter} account creations, holding ${held.length} attempt(s)`);
    assert.ok(killedAfter < SERVICES, 'the kill happened mid-run');

    const views = await until(async () => {
      const out = [];
      for (const uuid of uuids) {
        const res = await call('GET', `/services/${uuid}`);
        if (res.body.provision_status !== 'completed') return undefined;
        out.push(res.body);
      }
      return out;
    }, 180_000, 500);

    const accounts = (await panel<any[]>(p.url, p.accessHash, 'GET', '/account')).msg;
    assert.equal(accounts.length, SERVICES, 'one account per service, none extra');
    const byUsername = new Map(accounts.map((a) => [a.username, a]));
    assert.equal(byUsername.size, SERVICES);
    for (const view of views) {
      const account = byUsername.get(view.service_data.username);
      assert.ok(account, `service ${view.uuid} has its account`);
      assert.equal(account.name, view.provision_data.account_name);
      assert.equal(account.allowed_IPs.replace(/\/32$/, ''), view.provision_data.address.replace(/\/32$/, ''));
    }
    assert.equal(new Set(accounts.map((a) => a.allowed_IPs)).size, SERVICES, 'addresses are unique');
    const tasks = (await call('GET', '/tasks?status=completed&limit=1000')).body.tasks as any[];
    const creates = tasks.filter((task) => task.tags.includes('create'));
    assert.equal(creates.length, SERVICES, 'one completed create task per service');
    const retaken = creates.filter((task) => task.attempts >= 2).length;
    t.diagnostic(`${retaken} create tasks needed a second attempt (taken over from the killed worker)`);
    // What A held may be any of a service's jobs (its create, or a mail job the provisioning queued).
    // A mail job is not part of a service's provisioning: it may still wait for its lease to run out, so wait for its end
    for (const id of held) {
      const task = await until(async () => {
        const view = (await call('GET', `/tasks/${id}`)).body;
        return FINAL_STATUSES.includes(view.status as TaskStatus) ? view : undefined;
      }, 60_000, 200);
      t.diagnostic(`held by A: ${task.job} [${task.tags.join(' ')}] ended ${task.status} after ${task.attempts} attempts`);
      assert.equal(task.status, 'completed', `the task worker A held (${id}) completed`);
      assert.ok(task.attempts >= 2, `the attempt worker A held (${id}) was taken over by the other worker`);
    }

    // The platform has no job slot (--workers 0): the invoice mail of an order is planned on the platform through the
    // Smtp worker routes, rendered and sent over STARTTLS + AUTH by worker B, and recorded `sent` on the platform.
    const channel = await call('POST', '/modules/Notification/Smtp/instances', { label: 'Remote mail', module_data: {
      host: '127.0.0.1', port: smtp.port, encryption: 'starttls', username: smtp.user, password: smtp.password, sender: 'billing@vpn.example', ca: smtp.cert,
    } });
    assert.equal(channel.status, 201, JSON.stringify(channel.body));
    assert.equal((await call('PUT', `/products/${product.body.uuid}/prices/monthly`, { amount: '4.50', currency: 'EUR' })).status, 200);
    const order = await call('POST', '/orders', { customer: { email: 'remote-buyer@customer.example', name: 'Remo' }, product_uuid: product.body.uuid, billing_cycle: 'monthly', service_data: { username: 'remote_buyer', password: PASSWORD(999) } });
    assert.equal(order.status, 201, JSON.stringify(order.body));
    const [mail] = await smtp.waitForMails(1, 60_000);
    assert.equal(mail.subject, `Invoice ${order.body.invoice.number}: 4.50 EUR due ${order.body.invoice.due_date}`);
    assert.deepEqual(smtp.envelopes[0], ['remote-buyer@customer.example']);
    assert.deepEqual(smtp.authOverTls, [true]);
    const sent = await until(async () => {
      const sends = (await call('GET', '/smtp/sends?event=invoice.created')).body.sends as any[];
      return sends.length === 1 && sends[0].status === 'sent' ? sends[0] : undefined;
    }, 30_000, 100);
    assert.equal(sent.server_reply, '250 Message queued as test-1');

    await workers[1].stop();
    assert.equal((await workers[1].proc).exitCode, 0, 'the surviving worker stops gracefully on SIGTERM');
    await api.stop();

    for (const [i, workerDir] of workerDirs.entries()) assert.deepEqual(readdirSync(workerDir), [], `worker ${i} wrote nothing to its directory`);
    assert.equal(existsSync(forbiddenData), false, 'no worker created a data directory');
    const jobLogs = await readStore(dataDir, async (store) => Number((await store.db.selectFrom('module_logs').select((eb) => eb.fn.countAll().as('n'))
      .where(store.jsonText('request', 'method'), '=', 'createJob').where('level', '=', 'info').executeTakeFirstOrThrow()).n));
    t.diagnostic(`${jobLogs} createJob success entries reached module_logs through the worker API`);
    assert.ok(jobLogs >= SERVICES / 2, 'the workers’ module log entries reached the platform database');
    const outputs = [api, ...workers].map((child) => child.output()).join('\n');
    for (const secret of [p.accessHash, workerToken, adminToken, PASSWORD(0), PASSWORD(SERVICES - 1), smtp.password]) {
      assert.equal(outputs.includes(secret), false, 'no secret in any process output');
    }
  } finally {
    for (const child of children) await child.kill();
    for (const stop of stops.reverse()) await stop();
    for (const made of dirs) removeDir(made);
  }
});
