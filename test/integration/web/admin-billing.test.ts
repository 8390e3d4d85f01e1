// Admin billing pages (inject): a named product with a price made in the form, an order placed for a customer from the
// customer page, the invoice found by status / customer / day filters, paid manually, refunded in part and then in
// full; orders, the customer page (services with their billing state, invoices, credit, methods); revenue per month
// (paid minus refunded) on the page, in the admin API and in /metrics; every new page and action refuses a role
// without its permission with 403 `Insufficient permissions`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
const ROOT = { email: 'root.billing@example.com', password: 'Root-Pass-1' };
const VIEWER = { email: 'viewer.billing@example.com', password: 'Viewer-Pass-1' };
const SUPPORT = { email: 'support.billing@example.com', password: 'Support-Pass-1' };
const NOBODY = { email: 'nobody.billing@example.com', password: 'Nobody-Pass-1' };
let root: Browser;
let customerUuid = '';
let invoiceUuid = '';
let productUuid = '';

before(async () => {
  stack = await startWebStack();
  await stack.web.admins.create({ ...ROOT, role: 'Administrator' });
  const viewer = await stack.web.roles.create('Billing viewer', ['Platform-Core-billing', 'Platform-Core-customers', 'Platform-Core-dashboard']);
  await stack.web.admins.create({ ...VIEWER, role: viewer.id });
  const support = await stack.web.roles.create('Support', ['Platform-Core-customers']);
  await stack.web.admins.create({ ...SUPPORT, role: support.id });
  const none = await stack.web.roles.create('Dashboard only', ['Platform-Core-dashboard']);
  await stack.web.admins.create({ ...NOBODY, role: none.id });
  root = new Browser(stack.app);
  await root.loginAdmin(ROOT.email, ROOT.password);
  customerUuid = (await stack.web.customers.create({ email: 'erin@example.com', name: 'Erin', password: 'Erin-Pass-12' })).uuid;
});

after(async () => {
  await stack?.close();
});

const statusOf = (html: string) => /id="invoice-status">([a-z]+)</.exec(html)?.[1];

describe('billing in the admin web', { concurrency: false }, () => {
  test('a named product with a monthly price is made in the form; a bad price is refused at its field with the rest kept', async () => {
    await root.get('/admin/products/new?module=TabProduct');
    const fields = { module: 'TabProduct', name: 'Amsterdam Premium', description: 'Fast VPN', position: '1', visible: 'on', server_location: 'ams', plan_type: 'premium', disk_space: '10', bandwidth: '100', currency: 'EUR', price_monthly: '10.00', price_quarterly: '', price_semiannually: '', price_annually: '', refund_action: 'suspend' };
    const bad = await root.post('/admin/products', { ...fields, price_monthly: '10.001' });
    assert.equal(bad.statusCode, 422);
    assert.match(bad.body, /data-field="price_monthly">[^<]*10\.001/);
    assert.match(bad.body, /name="name" value="Amsterdam Premium"/);
    assert.equal((await stack.platform.catalogue.list()).length, 0);
    const ok = await root.post('/admin/products', fields);
    assert.equal(ok.statusCode, 303);
    const [product] = (await stack.platform.catalogue.list());
    productUuid = product.uuid;
    assert.equal(product.name, 'Amsterdam Premium');
    assert.equal(product.position, 1);
    assert.deepEqual((await stack.platform.billing.listPrices(product.uuid)).map((p) => [p.billing_cycle, p.amount, p.currency]), [['monthly', '10.00', 'EUR']]);
    assert.equal((await stack.platform.billing.refundPolicy(product.uuid)).refund_action, 'suspend');
    assert.match((await root.get('/admin/products')).body, /Amsterdam Premium[\s\S]*10\.00 EUR monthly/);
  });

  test('an order placed from the customer page makes the unpaid invoice, found by every filter', async () => {
    await root.get(`/admin/customers/${customerUuid}`);
    const placed = await root.post(`/admin/customers/${customerUuid}/orders`, { product_uuid: productUuid, billing_cycle: 'monthly', username: 'erin_vpn', domain: 'erin.example.com' });
    assert.equal(placed.statusCode, 303);
    const { invoices } = (await stack.platform.billing.listInvoices({ customer: customerUuid }, 1, 10));
    assert.equal(invoices.length, 1);
    invoiceUuid = invoices[0].uuid;
    assert.equal(invoices[0].description, 'Amsterdam Premium (monthly)');
    const number = invoices[0].number;
    for (const query of ['status=unpaid', 'customer=erin%40example.com', `customer=${customerUuid}`, 'from=2026-03-01&to=2026-03-01']) {
      assert.ok((await root.get(`/admin/invoices?${query}`)).body.includes(number), query);
    }
    for (const query of ['status=paid', 'customer=nobody%40example.com', 'from=2026-03-02']) {
      assert.ok(!(await root.get(`/admin/invoices?${query}`)).body.includes(number), query);
    }
    const orders = await root.get('/admin/orders');
    assert.match(orders.body, /erin@example\.com[\s\S]*Amsterdam Premium[\s\S]*monthly/);
    assert.ok(orders.body.includes(number));
  });

  test('manual payment, then a partial and a full refund; revenue shows paid minus refunded', async () => {
    const page = await root.get(`/admin/invoices/${invoiceUuid}`);
    assert.equal(statusOf(page.body), 'unpaid');
    assert.equal((await root.post(`/admin/invoices/${invoiceUuid}/payments`, { reference: 'wire-42', note: '' })).statusCode, 303);
    const paid = await root.get(`/admin/invoices/${invoiceUuid}`);
    assert.equal(statusOf(paid.body), 'paid');
    assert.match(paid.body, /marked paid/);
    const payment = (await stack.platform.billing.invoice(invoiceUuid)).transactions.find((t) => t.kind === 'payment')!;
    assert.equal(payment.external_id, 'wire-42');
    const tooMuch = await root.post(`/admin/transactions/${payment.uuid}/refund`, { amount: '11.00' });
    assert.equal(tooMuch.statusCode, 303);
    assert.match((await root.get(`/admin/invoices/${invoiceUuid}`)).body, /class="flash flash-error"/);
    assert.equal((await root.post(`/admin/transactions/${payment.uuid}/refund`, { amount: '4.00' })).statusCode, 303);
    const partial = await root.get(`/admin/invoices/${invoiceUuid}`);
    assert.equal(statusOf(partial.body), 'paid');
    assert.match(partial.body, /id="invoice-refunded">4\.00 EUR</);

    const revenue = await root.get('/admin/revenue');
    assert.match(revenue.body, /<tr data-month="2026-03">[\s\S]*?<td class="net"><span class="kv" data-currency="EUR">6\.00 EUR<\/span>/);
    assert.match(revenue.body, /src="\/assets\/vendor\/uplot\/uPlot\.iife\.min\.js"/, 'uPlot from the installed package');
    assert.equal((await root.get('/assets/vendor/uplot/uPlot.iife.min.js')).statusCode, 200);
    assert.equal((await root.get('/assets/vendor/uplot/package.json')).statusCode, 404, 'only the two uPlot files are served');
    const token = (await stack.platform.tokens.create('revenue test')).token;
    const api = await stack.app.inject({ method: 'GET', url: '/api/admin/revenue?months=3', headers: { authorization: `Bearer ${token}` } });
    assert.equal(api.statusCode, 200);
    const report = api.json() as { months: string[]; revenue: Record<string, { net_minor: number[]; paid_minor: number[]; refunded_minor: number[] }> };
    assert.deepEqual(report.months, ['2026-01', '2026-02', '2026-03']);
    assert.deepEqual(report.revenue.EUR, { ...report.revenue.EUR, paid_minor: [0, 0, 1000], refunded_minor: [0, 0, 400], net_minor: [0, 0, 600] });
    const metrics = await stack.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /vpnhost_platform_revenue_month_net\{currency="EUR"\} 6\b/);
    assert.match(metrics.body, /vpnhost_platform_mrr\{currency="EUR"\} 10\b/);
    assert.equal((await stack.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);

    assert.equal((await root.post(`/admin/transactions/${payment.uuid}/refund`, { amount: '' })).statusCode, 303);
    const full = await root.get(`/admin/invoices/${invoiceUuid}`);
    assert.equal(statusOf(full.body), 'refunded');
    assert.match(full.body, /id="invoice-refunded">10\.00 EUR</);
    assert.equal((await stack.platform.billing.invoice(invoiceUuid)).transactions.filter((t) => t.kind === 'refund').length, 2);
  });

  test('the customer page shows services with their billing state, invoices and balance; the dashboard the revenue', async () => {
    const page = await root.get(`/admin/customers/${customerUuid}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>erin@example\.com<\/h1>/);
    assert.match(page.body, /erin_vpn<\/a><\/td><td>Amsterdam Premium<\/td>/);
    assert.match(page.body, /id="customer-invoices"[\s\S]*Amsterdam Premium \(monthly\)/);
    assert.match(page.body, /id="customer-credit">No credit\./);
    assert.match(page.body, /id="admin-order"/);
    assert.match((await root.get('/admin')).body, /id="revenue-table"/);
  });

  test('billing runs: settings saved (and refused when inconsistent), dry run, run now; product overrides; a service\'s due date moved', async () => {
    const page = await root.get('/admin/billing');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="billing-settings"/);
    const saved = await root.post('/admin/billing/settings', {
      lead_days: '5', reminder_days_before: '3, 1', reminder_days_after: '7', suspend_after_days: '4', terminate_after_days: '20', auto_charge: 'on', run_every_minutes: '60', batch_size: '500',
    });
    assert.equal(saved.statusCode, 303);
    const settings = (await stack.platform.recurring.settings());
    assert.equal(settings.lead_days, 5);
    assert.deepEqual(settings.reminder_days_before, [1, 3], 'kept sorted');
    assert.equal(settings.terminate_after_days, 20);
    const bad = await root.post('/admin/billing/settings', { suspend_after_days: '30', terminate_after_days: '10', auto_charge: 'on' });
    assert.equal(bad.statusCode, 303);
    assert.match((await root.get('/admin/billing')).body, /class="flash flash-error"[^>]*>[^<]*terminate_after_days must be greater than suspend_after_days/);
    assert.equal((await stack.platform.recurring.settings()).terminate_after_days, 20, 'nothing saved');
    assert.match((await root.get('/admin/billing?dry=1')).body, /id="dry-run"[\s\S]*renewal invoice\(s\)/);
    assert.equal((await root.post('/admin/billing/run', {})).statusCode, 303);
    assert.match((await root.get('/admin/billing')).body, /Billing run #\d+ (finished|queued)/);

    const form = await root.get(`/admin/products/${productUuid}`);
    assert.match(form.body, /id="billing-overrides"/);
    assert.equal((await root.post(`/admin/products/${productUuid}/billing-settings`, { lead_days: '', suspend_after_days: '2', terminate_after_days: '', reminder_days_before: '', reminder_days_after: '', auto_charge: 'no' })).statusCode, 303);
    assert.deepEqual((await stack.platform.recurring.productSettings(productUuid)).overrides, { suspend_after_days: 2, auto_charge: false });

    // A second order, paid: its due date moved from the service page.
    const placed = await stack.platform.billing.order({ customer_uuid: customerUuid, product_uuid: productUuid, billing_cycle: 'monthly', service_data: { username: 'erin_two', domain: 'two.example.com' } });
    await stack.platform.billing.payManually(placed.invoice.uuid, 'wire-43');
    const due = (await stack.platform.recurring.service(placed.service_uuid)).next_due_date!;
    const service = await root.get(`/admin/services/${placed.service_uuid}`);
    assert.match(service.body, /id="next-due-form"/);
    const later = new Date(Date.parse(`${due}T00:00:00Z`) + 10 * 86_400_000).toISOString().slice(0, 10);
    assert.equal((await root.post(`/admin/services/${placed.service_uuid}/billing/next-due`, { next_due_date: later })).statusCode, 303);
    assert.equal((await stack.platform.recurring.service(placed.service_uuid)).next_due_date, later);

    // A prorated plan change to a dearer plan of the same module, from the service page: a change invoice.
    const premium = await stack.platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'enterprise', disk_space: 20, bandwidth: 200 }, { name: 'Amsterdam Enterprise' });
    (await stack.platform.billing.setPrice(premium.uuid, 'monthly', '30.00', 'EUR'));
    assert.match((await root.get(`/admin/services/${placed.service_uuid}`)).body, /id="change-plan-form"[\s\S]*Amsterdam Enterprise/);
    assert.equal((await root.post(`/admin/services/${placed.service_uuid}/billing/change-plan`, { product_uuid: premium.uuid })).statusCode, 303);
    assert.match((await root.get(`/admin/services/${placed.service_uuid}`)).body, /Plan change invoiced \([\d.]+ EUR\)/);
    const change = (await stack.platform.billing.listInvoices({ service: placed.service_uuid, status: 'unpaid' }, 1, 10)).invoices.find((i) => i.kind === 'change');
    assert.ok(change, 'a change invoice');
    assert.match(change.description, /^Plan change to Amsterdam Enterprise/);
  });

  test('every new page and action refuses a role without its permission: 403 Insufficient permissions', async () => {
    const payment = (await stack.platform.billing.invoice(invoiceUuid)).transactions.find((t) => t.kind === 'payment')!;
    const pages = ['/admin/invoices', `/admin/invoices/${invoiceUuid}`, '/admin/orders', '/admin/billing', '/admin/revenue', `/admin/customers/${customerUuid}`];
    const actions = [
      `/admin/invoices/${invoiceUuid}/payments`, `/admin/transactions/${payment.uuid}/refund`, '/admin/billing/run', '/admin/billing/settings',
      `/admin/customers/${customerUuid}/orders`, `/admin/customers/${customerUuid}/payment-methods/x/remove`,
      `/admin/products/${productUuid}/billing-settings`,
    ];
    const nobody = new Browser(stack.app);
    await nobody.loginAdmin(NOBODY.email, NOBODY.password);
    await nobody.get('/admin');
    for (const url of pages) {
      const res = await nobody.get(url);
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /Insufficient permissions/, url);
    }
    for (const url of actions) assert.equal((await nobody.post(url, {})).statusCode, 403, url);
    const home = (await nobody.get('/admin')).body;
    for (const href of ['/admin/invoices', '/admin/orders', '/admin/billing', '/admin/revenue']) assert.ok(!home.includes(`href="${href}"`), `sidebar hides ${href}`);
    assert.doesNotMatch(home, /id="revenue-table"/, 'no revenue on the dashboard without the key');

    // Billing without billing_actions: pages open, every action refused, no action forms shown.
    const viewer = new Browser(stack.app);
    await viewer.loginAdmin(VIEWER.email, VIEWER.password);
    for (const url of pages.filter((u) => u !== '/admin/revenue')) assert.equal((await viewer.get(url)).statusCode, 200, url);
    assert.equal((await viewer.get('/admin/revenue')).statusCode, 403);
    assert.doesNotMatch((await viewer.get(`/admin/customers/${customerUuid}`)).body, /id="admin-order"/);
    for (const url of actions) assert.equal((await viewer.post(url, {})).statusCode, 403, url);
    assert.equal((await viewer.post(`/admin/services/${(await stack.platform.billing.invoice(invoiceUuid)).service_uuid}/billing/next-due`, { next_due_date: '2026-05-01' })).statusCode, 403);

    // Customers without billing: the customer page without its billing parts.
    const support = new Browser(stack.app);
    await support.loginAdmin(SUPPORT.email, SUPPORT.password);
    const limited = await support.get(`/admin/customers/${customerUuid}`);
    assert.equal(limited.statusCode, 200);
    assert.doesNotMatch(limited.body, /id="customer-invoices"|id="customer-credit"/);
  });
});
