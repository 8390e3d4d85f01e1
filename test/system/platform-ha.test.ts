// Several platform processes (issue 22 item 3): two `platform serve` on one PostgreSQL and one Redis behind a
// round-robin proxy, two worker processes on the same store. Customers order and pay in the client area at once (the
// Stripe double's webhooks go through the proxy, so both processes take them) while the first serving process is
// SIGKILLed three times, each time with a request in flight to it (an order form, a payment webhook, a client page), and
// restarted on its port. A customer whose answer was lost does what a person does (reloads, sends the form again) and
// Stripe delivers an unacknowledged webhook again. Every acknowledged order, payment and webhook is kept, nothing is
// ordered beyond what was sent, no service is provisioned twice, no mail is sent twice, and no customer is logged out.
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretBox } from '../../shared/secret-box.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { requirePostgres, startPostgres } from '../helpers/postgres-server.ts';
import { startStripeDouble } from '../helpers/stripe-double.ts';
import { startBalancer, type ProxiedRequest } from '../fixtures/platform/balancer.ts';
import { payAndRedeliver, RetryingCustomer, type CustomerTally, type Delivery } from '../fixtures/platform/ha-customer.ts';
import { panel, until } from '../fixtures/platform/http.ts';
import { freePort, removeDir, spawnVpnhost, startPanel, startRedis, tempDir, vpnhost, type Child } from '../fixtures/platform/processes.ts';
import { createServer } from '../fixtures/platform/setup.ts';
import { HttpBrowser } from '../fixtures/web/http-browser.ts';
import { startSmtpServer } from '../integration/smtp/smtp-fixture.ts';

/** Customers ordering and paying at once; each places at least MIN_ORDERS and at most MAX_ORDERS orders. */
const CUSTOMERS = 3;
const MIN_ORDERS = 3;
const MAX_ORDERS = 12;
/** The three kills of the first process, each when a request of its kind is in flight there. */
const KILLS: Array<{ what: string; match: (r: ProxiedRequest) => boolean }> = [
  { what: 'an order form', match: (r) => r.method === 'POST' && r.path === '/client/order' },
  { what: 'a payment webhook', match: (r) => r.method === 'POST' && r.path.startsWith('/webhooks/payment/') },
  { what: 'a client page', match: (r) => r.path.startsWith('/client/') },
];
const SECRET_KEY = 'sk_test_51HaSuiteKey31415926';
const WEBHOOK_SECRET = 'whsec_HaSuiteSigningSecret2718';
const ADMIN = { email: 'ops@ha.example', password: 'Ha-Admin-Pass-77' };
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

/** Awaits every start (so each one that starts is cleaned up) and answers their values, or throws the first failure. */
async function settledAll<T extends readonly unknown[]>(starts: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(starts);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

test('two platform processes on PostgreSQL + Redis behind a proxy keep every acknowledged order, payment and webhook through three SIGKILLs', async (t) => {
  if (!requireTools(t, ['redis-server']) || !requirePostgres(t)) return;
  const started = Date.now();
  // Everything started is stopped at the end, in reverse order, whatever happens.
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const kept = async <T>(start: Promise<T>, stop: (value: T) => Promise<unknown> | unknown): Promise<T> => {
    const value = await start;
    cleanups.push(() => stop(value));
    return value;
  };
  const dirs = ['a', 'b', 'w1', 'w2'].map((name) => tempDir(`platform-ha-${name}`));
  cleanups.push(() => dirs.forEach(removeDir));
  const [dirA, dirB, dirW1, dirW2] = dirs as [string, string, string, string];
  const children = new Set<Child>();
  let balancer: Awaited<ReturnType<typeof startBalancer>> | null = null;
  try {
    const [pg, redis, smtp, panelProcess, { double, url: doubleUrl }] = await settledAll([
      kept(startPostgres(), (server) => server.stop()),
      kept(startRedis(), (server) => server.stop()),
      kept(startSmtpServer(), (server) => server.close()),
      kept(startPanel({ accounts: 1000 }), async (panelServer) => { await panelServer.stop(); removeDir(panelServer.dataDir); }),
      kept(startStripeDouble({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }), (stripe) => stripe.double.close()),
    ] as const);
    // Stopped first (the platform's processes hold connections to the services above).
    cleanups.push(async () => { for (const child of children) await child.kill(); });
    const ports = [await freePort(), await freePort()];
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
    const worker = async (dir: string): Promise<void> => {
      children.add(await spawnVpnhost(['platform', 'worker', '--data', dir, '--store', store, '--queue', redis.url, '--workers', '4'], /platform worker (started)/, TUNING));
    };
    let [first] = await settledAll([serve(0), serve(1), worker(dirW1), worker(dirW2)] as const);
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

    // Customers made in the admin web, each logged in to the client area, all through the proxy.
    const adminWeb = new HttpBrowser(base);
    assert.equal((await adminWeb.login('admin', ADMIN.email, ADMIN.password)).status, 303);
    const customers: RetryingCustomer[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const customer = new RetryingCustomer(base, `customer${i}@ha.example`, `Customer-Pass-${i}91`);
      await adminWeb.get('/admin/customers');
      assert.equal((await adminWeb.post('/admin/customers', { email: customer.email, name: `Customer ${i}`, password: `Customer-Pass-${i}91` })).status, 303);
      const login = await customer.login();
      assert.equal(login.status, 303, login.body);
      customers.push(customer);
    }
    const phases: Record<string, number> = { setup: Date.now() - started };

    // The customers order and pay at once while the killer SIGKILLs the first process three times, each time with a
    // request of the kind it waits for in flight there; during an outage a customer orders once, then waits for the
    // restart (bounded work on a fast or a slow machine alike).
    const paid: Array<{ customer: number; invoice: string; username: string }> = [];
    const deliveries: Delivery[] = [];
    let outage: { over: Promise<void>; end: () => void } | null = null;
    let killerDone = false;
    // The first failure of any of them stops the others (the killer's waits are raced against it) and is the one reported.
    let failed = false;
    let firstError: unknown = null;
    let abandon!: (error: unknown) => void;
    const abandoned = new Promise<never>((_resolve, reject) => { abandon = reject; });
    abandoned.catch(() => undefined);
    const unlessStopped = <T>(work: Promise<T>): Promise<T> => Promise.race([work, abandoned]);
    const stop = (error: unknown): void => {
      if (failed) return;
      failed = true;
      firstError = error;
      abandon(error);
      (outage as { end: () => void } | null)?.end();
    };
    const victims: ProxiedRequest[] = [];
    const where: string[] = customers.map(() => 'not started');
    const killTimes: Array<{ hunt: number; down: number }> = [];
    let huntFrom = Date.now();
    const drive = async (customer: RetryingCustomer, index: number): Promise<void> => {
      for (let n = 0; n < MAX_ORDERS && !failed && !(killerDone && n >= MIN_ORDERS); n++) {
        const during = outage;
        const username = `ha_${index}_${n}`;
        where[index] = `${username} ordering`;
        const invoice = await customer.order(product.body.uuid, username);
        where[index] = `${username} opening ${invoice}`;
        const session = await customer.checkoutSession(invoice);
        where[index] = `${username} paying ${session}`;
        deliveries.push(await payAndRedeliver(double, session));
        where[index] = `${username} checking ${invoice}`;
        assert.equal(await customer.invoiceStatus(invoice), 'paid', `${customer.email}: invoice ${invoice} paid once its webhook was acknowledged`);
        paid.push({ customer: index, invoice, username });
        where[index] = `${username} waiting for the restart`;
        if (during && during === outage) await during.over;
        where[index] = `${username} done`;
      }
    };
    // The first process takes its share before each kill (and after the last): it acknowledges a webhook first.
    let sinceStart = 0;
    const tookWebhooks = async (): Promise<void> => {
      await until(async () => (failed || balancer!.log().slice(sinceStart).some((r) => r.backend === backends[0] && KILLS[1]!.match(r) && r.outcome === 200) ? true : undefined), 60_000, 50)
        .catch((error: Error) => { throw new Error(`the first process took no webhook: ${error.message}; customers at ${where.join(' | ')}`); });
    };
    const killer = async (): Promise<void> => {
      for (const step of KILLS) {
        await unlessStopped(tookWebhooks());
        const victim = await unlessStopped(balancer!.whenInFlight((r) => r.backend === backends[0] && step.match(r), () => {
          first.proc.kill('SIGKILL');
          let end!: () => void;
          outage = { over: new Promise<void>((resolve) => { end = resolve; }), end };
        }, 60_000)).catch((error: Error) => {
          throw new Error(`kill ${victims.length + 1} (${step.what}): ${error.message}; orders placed per customer ${customers.map((c) => c.tally.submissions).join(', ')}, ${paid.length} paid, kill timings ${JSON.stringify(killTimes)}; customers at ${where.join(' | ')}; in flight ${balancer!.log().filter((r) => r.outcome === 'in-flight' || r.outcome === 'sending').map((r) => `${r.backend.slice(-5)} ${r.method} ${r.path}`).join(', ')}`);
        });
        const killedAt = Date.now();
        victims.push(victim);
        await first.kill();
        children.delete(first);
        sinceStart = balancer!.log().length;
        first = await serve(0);
        await until(async () => ((await fetch(`${backends[0]}/client/login`, { signal: AbortSignal.timeout(10_000) }).catch(() => null))?.status === 200 ? true : undefined), 60_000, 50);
        killTimes.push({ hunt: killedAt - huntFrom, down: Date.now() - killedAt });
        huntFrom = Date.now();
        const over = outage as { end: () => void } | null;
        outage = null;
        over?.end();
      }
      await unlessStopped(tookWebhooks());
      killerDone = true;
    };
    await Promise.allSettled([killer(), ...customers.map((c, i) => drive(c, i))].map((p) => p.catch(stop)));
    if (failed) throw firstError;
    phases.load = Date.now() - started - phases.setup!;
    assert.equal(victims.length, KILLS.length);

    // Nobody was logged out; the kills cut requests in flight, the cut ones were sent again, and the webhooks went to
    // both processes (some cut by a kill and delivered again).
    const tallies = customers.map((c) => c.tally);
    const sum = (pick: (t: CustomerTally) => number) => tallies.reduce((n, t) => n + pick(t), 0);
    const log = balancer.log();
    const webhooks = log.filter((r) => r.path.startsWith('/webhooks/payment/'));
    const webhooksAt = backends.map((b) => webhooks.filter((r) => r.backend === b && typeof r.outcome === 'number' && r.outcome < 300).length);
    const cut = log.filter((r) => r.outcome === 'cut').length;
    const redeliveries = deliveries.reduce((n, d) => n + d.statuses.length - 1, 0);
    const cutWebhooks = webhooks.filter((r) => r.outcome === 'cut').length;
    const refused = log.filter((r) => r.outcome === 'refused').length;
    t.diagnostic(`kills ${victims.length} (with in flight: ${victims.map((v) => `${v.method} ${v.path.replace(/[0-9a-f-]{36}/, ':uuid')} → ${v.outcome}`).join('; ')})`);
    t.diagnostic(`requests cut ${cut}, refused and sent elsewhere ${refused}; customers ${CUSTOMERS}: ${sum((t) => t.submissions)} order forms sent, ${sum((t) => t.resent)} re-sent, ${sum((t) => t.acknowledged.length)} acknowledged, ${sum((t) => t.adopted.length)} kept though cut; ${paid.length} paid; ${sum((t) => t.answered)} pages answered, ${sum((t) => t.cut)} lost and reloaded`);
    t.diagnostic(`webhooks acknowledged per backend ${webhooksAt.join(' / ')}, cut ${cutWebhooks}, redeliveries ${redeliveries} (statuses ${deliveries.filter((d) => d.statuses.length > 1).map((d) => d.statuses.join('→')).join(', ')}); proxy ${JSON.stringify(balancer.counts())}`);
    const outcomes = (backend: string) => {
      const tally = new Map<string, number>();
      for (const r of webhooks) if (r.backend === backend) tally.set(String(r.outcome), (tally.get(String(r.outcome)) ?? 0) + 1);
      return [...tally].map(([outcome, n]) => `${outcome}×${n}`).join(' ');
    };
    t.diagnostic(`webhook outcomes per backend: ${backends.map(outcomes).join(' / ')}`);
    assert.equal(sum((t) => t.loggedOut), 0, 'no customer was logged out by a switch of process');
    assert.ok(webhooksAt.every((n) => n > 0), `webhooks acknowledged by both processes: ${webhooksAt.join(', ')}`);
    assert.ok(cutWebhooks > 0 && redeliveries >= cutWebhooks, `a webhook cut by a kill was delivered again (${cutWebhooks} cut, ${redeliveries} redeliveries)`);
    assert.ok(sum((t) => t.resent) > 0, 'an order form cut by a kill was sent again');

    // What the customers submitted and saw is what the store holds: every acknowledged order, and a lost one only
    // when its re-send was refused for it; nothing more.
    const known = (await acknowledged(base, token, 'GET', '/customers?per_page=100')).body.customers as Array<{ uuid: string; email: string }>;
    for (const customer of customers) {
      const uuid = known.find((k) => k.email === customer.email)!.uuid;
      const stored = ((await acknowledged(base, token, 'GET', `/invoices?customer=${uuid}&per_page=100`)).body.invoices as Array<{ uuid: string }>).map((i) => i.uuid);
      const seen = [...customer.tally.acknowledged, ...customer.tally.adopted];
      assert.deepEqual([...stored].sort(), [...seen].sort(), `${customer.email}: the orders kept are the ones acknowledged or found after a lost answer`);
      assert.ok(stored.length <= customer.tally.submissions);
    }

    // Every paid invoice is paid once; every service provisioned once on the panel.
    let statuses: string[] = [];
    const services = new Map<string, string>();
    for (const p of paid) {
      const invoice = await acknowledged(base, token, 'GET', `/invoices/${p.invoice}`);
      assert.equal(invoice.body.status, 'paid', `invoice ${p.invoice}`);
      assert.equal(invoice.body.transactions.filter((tr: any) => tr.kind === 'payment').length, 1, `one payment on ${p.invoice}`);
      services.set(invoice.body.service_uuid, p.username);
    }
    const views = await until(async () => {
      const out = [];
      for (const uuid of services.keys()) {
        const res = await call(base, token, 'GET', `/services/${uuid}`).catch(() => null);
        out.push(res?.status === 200 ? res.body : { provision_status: `http ${res?.status}` });
      }
      statuses = out.map((v) => `${v.provision_status}${v.status_reason ? ` (${v.status_reason})` : ''}`);
      if (out.some((v) => v.provision_status === 'failed')) throw new Error('a service failed');
      return out.every((v) => v.provision_status === 'completed') ? out : undefined;
    }, 180_000, 200).catch((error: Error) => {
      const outputs = [...children].map((c) => c.output().split('\n').slice(-15).join('\n')).join('\n---\n');
      throw new Error(`${error.message}; services: ${statuses.join(', ')}\n${outputs}`);
    });
    const accounts = (await panel<any[]>(panelProcess.url, panelProcess.accessHash, 'GET', '/account')).msg;
    for (const view of views) {
      assert.equal(view.service_data.username, services.get(view.uuid));
      assert.equal(accounts.filter((a) => a.username === view.service_data.username).length, 1, `service ${view.uuid} owns exactly one panel account`);
    }
    phases.provisioned = Date.now() - started - phases.setup! - phases.load!;

    // One "ready" mail per paid service, one "payment received" per invoice: none twice.
    const ready = 'Your vpnhost VPN is ready: how to connect';
    await until(async () => (smtp.received.filter((m) => m.subject === ready).length >= paid.length ? true : undefined), 120_000, 200);
    await until(async () => {
      const sends = await acknowledged(base, token, 'GET', '/smtp/sends');
      const list = (sends.body.sends ?? []) as Array<{ status: string }>;
      return list.length > 0 && list.every((s) => s.status === 'sent' || s.status === 'skipped') ? true : undefined;
    }, 60_000, 200);
    for (const p of paid) {
      const mine = smtp.received.filter((m) => m.subject === ready && new RegExp(`Username: ${p.username}(?![0-9A-Za-z_])`).test(String(m.text)));
      assert.equal(mine.length, 1, `one ready mail for ${p.username}`);
    }
    assert.equal(smtp.received.filter((m) => m.subject === ready).length, paid.length, 'no ready mail for anything but a paid service');
    const subjects = smtp.received.map((m) => String(m.subject)).filter((s) => s.startsWith('Payment received'));
    assert.equal(new Set(subjects).size, subjects.length, 'no payment mail twice');

    t.diagnostic(`phases (ms): ${JSON.stringify(phases)}, kills (ms) ${JSON.stringify(killTimes)}`);
    for (const child of children) assert.equal(child.output().includes(panelProcess.accessHash), false, 'access hash never logged');
  } finally {
    await balancer?.close();
    for (const cleanup of cleanups.reverse()) await Promise.resolve().then(cleanup).catch((error: Error) => t.diagnostic(`clean-up: ${error.message}`));
  }
});
