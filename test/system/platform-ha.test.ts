// Several platform processes (issue 22 item 3): two `platform serve` on one PostgreSQL and one Redis behind a
// round-robin proxy, two worker processes on the same store. Customers order and pay (the Stripe double's webhooks go
// through the proxy, so both processes take them) while one serving process is SIGKILLed and restarted three times.
// Every acknowledged order, payment and webhook is kept, no service is provisioned twice, no mail is sent twice, and a
// logged-in customer stays logged in whichever process answers.
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretBox } from '../../shared/secret-box.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { requirePostgres, startPostgres } from '../helpers/postgres-server.ts';
import { startStripeDouble } from '../helpers/stripe-double.ts';
import { startBalancer } from '../fixtures/platform/balancer.ts';
import { panel, until } from '../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, startPanel, startRedis, tempDir, vpnhost, type Child } from '../fixtures/platform/processes.ts';
import { createServer } from '../fixtures/platform/setup.ts';
import { HttpBrowser } from '../fixtures/web/http-browser.ts';
import { startSmtpServer } from '../integration/smtp/smtp-fixture.ts';

const ORDERS = 18;
/** Orders after which the first serving process is killed (and restarted at once). */
const KILL_AFTER = [3, 8, 13];
const SECRET_KEY = 'sk_test_51HaSuiteKey31415926';
const WEBHOOK_SECRET = 'whsec_HaSuiteSigningSecret2718';
const ADMIN = { email: 'ops@ha.example', password: 'Ha-Admin-Pass-77' };
const CUSTOMER = { email: 'carla@ha.example', password: 'Carla-Pass-991' };
const TUNING = { VPNHOST_PLATFORM_LOCK_MS: '2000', VPNHOST_PLATFORM_LEASE_MS: '3000', VPNHOST_LOG_LEVEL: 'warn' };

interface Answer { status: number; body: any }

/** The admin API through the proxy; a 502 (the answering process died) is an unacknowledged call, not a JSON body. */
async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}/api/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* a proxy's text */ }
  return { status: res.status, body: parsed };
}

/** Repeats an idempotent admin call until a process acknowledges it (bounded). */
async function acknowledged(base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return until(async () => {
    const res = await call(base, token, method, path, body).catch(() => null);
    return res && res.status < 500 ? res : undefined;
  }, 60_000, 100);
}

test('two platform processes on PostgreSQL + Redis behind a proxy keep every acknowledged order, payment and webhook through three SIGKILLs', async (t) => {
  if (!requireTools(t, ['redis-server']) || !requirePostgres(t)) return;
  const pg = await startPostgres();
  const redis = await startRedis();
  const smtp = await startSmtpServer();
  const panelProcess = await startPanel({ accounts: 1000 });
  const { double, url: doubleUrl } = await startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  const dirs = ['a', 'b', 'w1', 'w2'].map((name) => tempDir(`platform-ha-${name}`));
  const [dirA, dirB, dirW1, dirW2] = dirs as [string, string, string, string];
  const children = new Set<Child>();
  const ports = [await freePort(), await freePort()];
  let balancer: Awaited<ReturnType<typeof startBalancer>> | null = null;
  try {
    await createServer(panelProcess, 'main', '10.79.0.1/22');
    const store = await pg.createDatabase('platform_ha');
    // One host's set-up: the admin token and the web admin; every other host gets the same secret.key.
    const token = await vpnhost(['platform', 'admin-token', 'create', '--data', dirA, '--store', store, '--comment', 'ha test']);
    assert.match(token, /^vpa_[0-9a-f]{64}$/);
    const passwordFile = join(dirA, 'admin-password');
    writeFileSync(passwordFile, ADMIN.password);
    await vpnhost(['platform', 'admin', 'create', '--email', ADMIN.email, '--password-file', passwordFile, '--data', dirA, '--store', store]);
    SecretBox.open(dirA); // the key that seals secrets at rest, made once and copied to every host
    for (const dir of [dirB, dirW1, dirW2]) copyFileSync(join(dirA, 'secret.key'), join(dir, 'secret.key'));

    const serve = async (index: 0 | 1): Promise<Child> => {
      const child = await spawnVpnhost(
        ['platform', 'serve', '--listen', `127.0.0.1:${ports[index]}`, '--data', index === 0 ? dirA : dirB, '--store', store, '--queue', redis.url, '--workers', '0'],
        /platform listening on (http:\/\/\S+)/, TUNING,
      );
      children.add(child);
      return child;
    };
    let first = await serve(0);
    await serve(1);
    for (const dir of [dirW1, dirW2]) {
      children.add(await spawnVpnhost(['platform', 'worker', '--data', dir, '--store', store, '--queue', redis.url, '--workers', '4'], /platform worker (started)/, TUNING));
    }
    const backends = ports.map((port) => `http://127.0.0.1:${port}`);
    balancer = await startBalancer(() => backends);
    const base = balancer.url;

    // The provider's set-up, through the proxy.
    assert.equal((await acknowledged(base, token, 'POST', '/panels', { location: 'ams', api_url: panelProcess.url, access_hash: panelProcess.accessHash })).status, 201);
    const gw = await acknowledged(base, token, 'POST', '/modules/Payment/Stripe/instances', { label: 'Stripe (double)', module_data: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET, api_base: doubleUrl } });
    assert.equal(gw.status, 201, JSON.stringify(gw.body));
    double.webhookUrl = `${base}/webhooks/payment/${gw.body.uuid}`;
    const mail = await acknowledged(base, token, 'POST', '/modules/Notification/Smtp/instances', { label: 'Customer mail', module_data: {
      host: '127.0.0.1', port: smtp.port, encryption: 'starttls', username: smtp.user, password: smtp.password, sender: 'VPN Host <noreply@vpn.example>', ca: smtp.cert,
    } });
    assert.equal(mail.status, 201, JSON.stringify(mail.body));
    const product = await acknowledged(base, token, 'POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 10 } });
    assert.equal(product.status, 201, JSON.stringify(product.body));
    assert.equal((await acknowledged(base, token, 'PUT', `/products/${product.body.uuid}/prices/monthly`, { amount: '4.99', currency: 'EUR' })).status, 200);

    // A customer account made in the admin web and logged in to the client area, all through the proxy.
    const adminWeb = new HttpBrowser(base);
    assert.equal((await adminWeb.login('admin', ADMIN.email, ADMIN.password)).status, 303);
    await adminWeb.get('/admin/customers');
    assert.equal((await adminWeb.post('/admin/customers', { email: CUSTOMER.email, name: 'Carla', password: CUSTOMER.password })).status, 303);
    const customer = new HttpBrowser(base);
    const login = await customer.login('client', CUSTOMER.email, CUSTOMER.password);
    assert.equal(login.status, 303, login.body);
    let loggedOut = 0;
    let clientPages = 0;
    const customerStillIn = async (): Promise<void> => {
      const page = await customer.get('/client').catch(() => null);
      if (!page || page.status >= 500) return; // lost in flight with a dying process: not an answer
      clientPages++;
      if (page.status === 303 && /\/client\/login/.test(page.location ?? '')) loggedOut++;
    };

    // Orders and payments while the first process is killed and restarted three times.
    const kept: Array<{ service: string; invoice: string; username: string }> = [];
    let unacknowledgedOrders = 0;
    let webhookRetries = 0;
    let kills = 0;
    for (let i = 0; i < ORDERS; i++) {
      const username = `ha_${i}`;
      const order = await call(base, token, 'POST', '/orders', {
        customer: { email: `${username}@customers.example` }, product_uuid: product.body.uuid, billing_cycle: 'monthly', service_data: { username, password: `Ha-Passw0rd-${i}x` },
      }).catch(() => null);
      if (order?.status === 201) kept.push({ service: order.body.service_uuid, invoice: order.body.invoice.uuid, username });
      else {
        assert.ok(!order || order.status >= 502, `an order is refused only by a lost process: ${JSON.stringify(order)}`);
        unacknowledgedOrders++;
      }
      await customerStillIn();
      if (KILL_AFTER.includes(i)) {
        await first.kill();
        children.delete(first);
        kills++;
        await customerStillIn(); // answered by the other process while the first is down
        first = await serve(0);
      }
    }
    assert.equal(kills, 3);

    // Pay every acknowledged invoice through the double; a webhook the proxy lost is delivered again, as Stripe retries.
    for (const { invoice } of kept) {
      const session = await acknowledged(base, token, 'POST', `/invoices/${invoice}/payment-session`, { gateway_uuid: gw.body.uuid, return_url: 'http://127.0.0.1/done', cancel_url: 'http://127.0.0.1/cancel' });
      assert.equal(session.status, 200, JSON.stringify(session.body));
      const link = /\/pay\/(cs_test_[0-9a-f]+)"/.exec(session.body.html);
      assert.ok(link, session.body.html);
      let status = await double.pay(link[1]!);
      while (status >= 500 && webhookRetries < 50) {
        webhookRetries++;
        status = await double.replay(double.events.at(-1)!.id);
      }
      assert.equal(status, 200, 'the payment webhook is acknowledged');
      await customerStillIn();
    }
    await double.settled();

    // Every acknowledged invoice is paid once; every service provisioned once on the panel.
    let statuses: string[] = [];
    const views = await until(async () => {
      const out = [];
      for (const k of kept) {
        const res = await call(base, token, 'GET', `/services/${k.service}`).catch(() => null);
        out.push(res?.status === 200 ? res.body : { provision_status: `http ${res?.status}` });
      }
      statuses = out.map((v) => `${v.provision_status}${v.status_reason ? ` (${v.status_reason})` : ''}`);
      if (out.some((v) => v.provision_status === 'failed')) throw new Error('a service failed');
      return out.every((v) => v.provision_status === 'completed') ? out : undefined;
    }, 180_000, 500).catch((error: Error) => {
      const outputs = [...children].map((c) => c.output().split('\n').slice(-15).join('\n')).join('\n---\n');
      throw new Error(`${error.message}; services: ${statuses.join(', ')}\n${outputs}`);
    });
    for (const k of kept) {
      const invoice = await acknowledged(base, token, 'GET', `/invoices/${k.invoice}`);
      assert.equal(invoice.body.status, 'paid', `invoice ${k.invoice}`);
      assert.equal(invoice.body.transactions.filter((tr: any) => tr.kind === 'payment').length, 1, `one payment on ${k.invoice}`);
    }
    const accounts = (await panel<any[]>(panelProcess.url, panelProcess.accessHash, 'GET', '/account')).msg;
    for (const view of views) {
      const owned = accounts.filter((a) => a.username === view.service_data.username);
      assert.equal(owned.length, 1, `service ${view.uuid} owns exactly one panel account`);
    }

    // One "ready" mail per service, one "payment received" per invoice: none twice.
    const ready = 'Your vpnhost VPN is ready: how to connect';
    await until(async () => (smtp.received.filter((m) => m.subject === ready).length >= kept.length ? true : undefined), 120_000, 200);
    await until(async () => {
      const sends = await acknowledged(base, token, 'GET', '/smtp/sends');
      const list = (sends.body.sends ?? []) as Array<{ status: string }>;
      return list.length > 0 && list.every((s) => s.status === 'sent' || s.status === 'skipped') ? true : undefined;
    }, 60_000, 200);
    for (const k of kept) {
      const mine = smtp.received.filter((m) => m.subject === ready && new RegExp(`Username: ${k.username}(?![0-9A-Za-z_])`).test(String(m.text)));
      assert.equal(mine.length, 1, `one ready mail for ${k.username}`);
    }
    const subjects = smtp.received.map((m) => String(m.subject));
    assert.equal(new Set(subjects.filter((s) => s.startsWith('Payment received'))).size, subjects.filter((s) => s.startsWith('Payment received')).length, 'no payment mail twice');

    assert.equal(loggedOut, 0, 'the customer was never logged out');
    const counts = balancer.counts();
    assert.ok(Object.values(counts.byBackend).every((n) => n > 0) && Object.keys(counts.byBackend).length === 2, `both processes answered: ${JSON.stringify(counts)}`);
    t.diagnostic(`${kept.length} orders kept, ${unacknowledgedOrders} lost in flight, ${webhookRetries} webhook retries, ${clientPages} client pages, proxy ${JSON.stringify(counts)}`);
    for (const child of children) assert.equal(child.output().includes(panelProcess.accessHash), false, 'access hash never logged');
  } finally {
    for (const child of children) await child.kill();
    await balancer?.close();
    await double.close();
    await panelProcess.stop();
    await smtp.close();
    await redis.stop();
    await pg.stop();
    for (const dir of [...dirs, panelProcess.dataDir]) removeDir(dir);
  }
});
