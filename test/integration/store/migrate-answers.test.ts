// `vpnhost platform store migrate` of a data directory made by today's release (test/fixtures/platform/release-2026-11)
// into PostgreSQL, then the same platform started on PostgreSQL (same data directory, so the same secret.key) answers
// the admin API, the admin pages and the client area exactly as it did on SQLite.
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { pino } from 'pino';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { createWebDeps } from '../../../module/platform/web/web-host.ts';
import { manualClock } from '../../../shared/clock.ts';
import { removeDir, tempDir, vpnhost } from '../../fixtures/platform/processes.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { requirePostgres, startPostgres, type PostgresServer } from '../../helpers/postgres-server.ts';

const FIXTURE = new URL('../../fixtures/platform/release-2026-11/', import.meta.url).pathname;
/** The fixture's customer with a paid monthly service (given a client-area password before the copy). */
const ANA = { email: 'ana.lopez@example.test', password: 'Ana-Migrate-Pass-1' };
const ADMIN = { email: 'migrate.admin@example.test', password: 'Migrate-Admin-Pass-1' };

let server: PostgresServer | null = null;
let dataDir = '';

before(() => {
  dataDir = tempDir('migrate-answers');
  cpSync(FIXTURE, dataDir, { recursive: true });
});

after(async () => {
  await server?.stop();
  removeDir(dataDir);
});

interface Answer {
  status: number;
  type: string;
  body: unknown;
}

/**
 * What legitimately differs between the two runs, and only that: the CSRF token a page carries (made per session, in
 * forms and in a tab's `data-csrf`) and the session cookies (never compared: an answer is its status, content type and
 * body). The clock is the same fixed instant on both sides, so dates, "due in" texts and revenue months are compared.
 */
function normalise(html: string): string {
  return html.replace(/(name="_csrf" value=")[^"]+"/g, '$1CSRF"').replace(/(data-csrf=")[^"]+"/g, '$1CSRF"');
}

/** The platform on `store` (the release's modules config, no workers, a fixed clock) and what it answers. */
async function answersOn(store: string | undefined, token: string): Promise<Map<string, Answer>> {
  const clock = manualClock(new Date('2026-11-28T12:00:00Z'));
  const logger = pino({ level: process.env.VPNHOST_TEST_LOG ?? 'silent' });
  const platform = await Platform.open({ dataDir, store, clock, logger, moduleWatchMs: 0 });
  const app = await buildPlatformApp({ platform, logger });
  try {
    const answers = new Map<string, Answer>();
    const keep = (key: string, res: { statusCode: number; headers: Record<string, unknown>; body: string }): void => {
      const type = String(res.headers['content-type'] ?? '');
      const body = type.startsWith('application/json') ? JSON.parse(res.body) : normalise(res.body);
      answers.set(key, { status: res.statusCode, type, body });
    };
    const api = async (path: string): Promise<any> => {
      const res = await app.inject({ method: 'GET', url: `/api/admin${path}`, headers: { authorization: `Bearer ${token}` } });
      keep(`api ${path}`, res);
      return JSON.parse(res.body);
    };
    const { products } = await api('/products');
    for (const p of products) await api(`/products/${p.uuid}`);
    await api('/prices');
    for (const p of products) {
      await api(`/prices?product=${p.uuid}`);
      await api(`/products/${p.uuid}/refund-policy`);
      await api(`/products/${p.uuid}/billing-settings`);
    }
    await api('/services?page=1&per_page=3');
    await api('/services?page=2&per_page=3');
    await api('/services?location=ams&per_page=2&page=2');
    await api('/services?status=pending');
    // Filters whose engine functions differ (substring search, JSON members, case, dates kept as text).
    for (const q of ['bo_1', 'BO_1', 'ana', 'North', '7671ae3c']) await api(`/services?q=${encodeURIComponent(q)}`);
    await api('/services?status=completed&location=ams&page=1&per_page=1');
    const { services } = await api('/services?per_page=500') as { services: Array<{ uuid: string; service_data: { username?: string } }> };
    for (const s of services) {
      await api(`/services/${s.uuid}`);
      await api(`/services/${s.uuid}/billing`);
    }
    const { customers } = await api('/customers');
    await api('/customers?page=2&per_page=2');
    for (const c of customers) {
      await api(`/customers/${c.uuid}/credit`);
      await api(`/customers/${c.uuid}/payment-methods`);
      await api(`/invoices?customer=${c.uuid}`);
    }
    const invoices = await api('/invoices');
    await api('/invoices?status=paid');
    await api('/invoices?page=2&per_page=2');
    await api('/invoices?from=2026-11-27&to=2026-11-27');
    await api('/invoices?from=2026-11-28');
    await api('/invoices?status=refunded&to=2026-11-26');
    for (const i of invoices.invoices) await api(`/invoices/${i.uuid}`);
    await api('/orders');
    await api('/orders?page=2&per_page=3');
    const { tasks } = await api('/tasks');
    await api('/tasks?status=completed&limit=5');
    for (const t of tasks.slice(0, 4)) await api(`/tasks/${t.id}`);
    await api('/modules');
    await api('/module-logs');
    await api('/module-logs?type=Product&level=info&per_page=5&page=2');
    await api('/module-logs?q=ana_1');
    await api('/revenue');
    await api('/revenue?months=24');
    await api('/billing/settings');
    const { runs } = await api('/billing/runs');
    for (const r of runs) await api(`/billing/runs/${r.id}`);
    // The modules' own reads (their tables came along in the copy).
    await api('/smtp/sends');
    await api('/panels');
    keep('metrics', await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } }));

    const admin = new Browser(app);
    const login = await admin.loginAdmin(ADMIN.email, ADMIN.password);
    assert.equal(login.statusCode, 303, 'the admin logs in');
    const page = async (browser: Browser, path: string): Promise<void> => keep(`web ${path}`, await browser.get(path));
    const ana = customers.find((c: { email: string }) => c.email === ANA.email);
    for (const path of ['/admin/', '/admin/invoices', '/admin/invoices?status=paid', '/admin/invoices?customer=Ana.Lopez%40Example.test&from=2026-11-01&to=2026-11-30',
      '/admin/services?q=bo_1&status=completed', '/admin/services', '/admin/customers', '/admin/products', '/admin/orders', '/admin/tasks', '/admin/revenue', '/admin/modules',
      '/admin/billing', '/admin/panels', '/admin/roles', '/admin/module-settings', '/admin/modules/Plugin/VpnFleet/fleet', '/admin/modules/Plugin/VpnFleet/events',
      '/admin/modules/Plugin/VpnFleet/api/panels', '/admin/modules/Plugin/VpnFleet/api/events']) {
      await page(admin, path);
    }
    await page(admin, `/admin/customers/${ana.uuid}`);
    for (const s of services) {
      await page(admin, `/admin/services/${s.uuid}`);
      await page(admin, `/admin/services/${s.uuid}?log_page=2`);
    }
    for (const i of invoices.invoices) await page(admin, `/admin/invoices/${i.uuid}`);
    for (const p of products) await page(admin, `/admin/products/${p.uuid}`);

    const client = new Browser(app);
    assert.equal((await client.loginCustomer(ANA.email, ANA.password)).statusCode, 303, 'the customer logs in');
    await page(client, '/client/');
    await page(client, '/client/invoices');
    await page(client, '/client/payment-methods');
    await page(client, '/client/order');
    const mine = services.filter((s) => s.service_data.username === 'ana_1');
    assert.equal(mine.length, 1);
    await page(client, `/client/services/${mine[0].uuid}`);
    return answers;
  } finally {
    await app.close();
    await platform.close();
  }
}

test('store migrate of the release fixture into PostgreSQL: the admin API, the admin pages and the client area answer as on SQLite', async (t) => {
  if (!requirePostgres(t)) return;
  server = await startPostgres();
  // An admin made through the CLI, and a password for a fixture customer, before the copy.
  const passwordFile = `${dataDir}/admin-password`;
  writeFileSync(passwordFile, `${ADMIN.password}\n`, { mode: 0o600 });
  await vpnhost(['platform', 'admin', 'create', '--email', ADMIN.email, '--name', 'Migrate Admin', '--password-file', passwordFile, '--data', dataDir]);
  const token = await vpnhost(['platform', 'admin-token', 'create', '--data', dataDir, '--comment', 'migrate test']);
  {
    const platform = await Platform.open({ dataDir, logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
    try {
      const web = await createWebDeps(platform);
      const ana = await web.customers.queries.findByEmail(ANA.email);
      assert.ok(ana, 'the fixture has Ana');
      await web.customers.setPassword(ana.uuid, ANA.password);
    } finally {
      await platform.close();
    }
  }

  const onSqlite = await answersOn(undefined, token);
  await vpnhost(['platform', 'store', 'migrate', '--from', dataDir, '--to', server.url]);
  const onPostgres = await answersOn(server.url, token);

  assert.deepEqual([...onPostgres.keys()], [...onSqlite.keys()]);
  const differ = [...onSqlite].filter(([key, a]) => !isDeepStrictEqual(a, onPostgres.get(key))).map(([key]) => key);
  for (const key of differ) assert.deepEqual(onPostgres.get(key), onSqlite.get(key), key);
  // The answers are not empty ones: the fixture's data is in them.
  const services = onSqlite.get('api /services?per_page=500')!.body as { services: unknown[] };
  assert.equal(services.services.length, 4);
  assert.equal((onSqlite.get('api /invoices')!.body as { invoices: unknown[] }).invoices.length, 4);
  for (const [key, answer] of onSqlite) assert.equal(answer.status, 200, key);
  assert.match(String(onSqlite.get('web /admin/invoices')!.body), /paid/);
  assert.match(String(onSqlite.get('web /client/')!.body), /ana_1|Ana/);
});
