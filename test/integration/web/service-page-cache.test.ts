// The client area's service page cache (ServicePageCache over the store's change mark): a page is read and rendered
// once and answered again while nothing was written; any change to what it shows — the service, its billing, its
// invoices, its product, a write by another connection — shows on the next request; a customer never gets another's
// page; a tab that does not declare `cache: 'store'` is rendered on every request, a failed tab is never kept; a
// logout refuses the cookie at once although its session was kept.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { PLATFORM_DB_FILE } from '../../../module/platform/store/db.ts';
import { ClientPageQueries } from '../../../module/platform/store/query/repositories/client-page.ts';
import { CSRF_COOKIE } from '../../../module/platform/web/render.ts';
import { TabProduct } from '../../fixtures/web/web-modules.ts';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

const ALICE = { email: 'alice.cache@example.com', password: 'Alice-Pass-1' };
const BOB = { email: 'bob.cache@example.com', password: 'Bob-Pass-12' };
let stack: WebStack;
let product: string;
let alice: string;
let bob: string;

/** Service page reads made since the last reset (every app's ClientPageQueries). */
let pageReads = 0;
const servicePage = ClientPageQueries.prototype.servicePage;
ClientPageQueries.prototype.servicePage = function (this: ClientPageQueries, uuid: string) {
  pageReads += 1;
  return servicePage.call(this, uuid);
};

before(async () => {
  stack = await startWebStack();
  product = (await stack.platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'premium', disk_space: 10, bandwidth: 100 }, { name: 'Cache Plan' })).uuid;
  await stack.platform.billing.setPrice(product, 'monthly', '8.00', 'EUR');
  alice = (await stack.web.customers.create(ALICE)).uuid;
  bob = (await stack.web.customers.create(BOB)).uuid;
});

afterEach(() => {
  TabProduct.liveFails = false;
});

after(async () => {
  ClientPageQueries.prototype.servicePage = servicePage;
  await stack?.close();
});

/** A monthly service of `customer`, paid unless `paid: false` (then it waits for its invoice). */
async function service(customer: string, username: string, paid = true): Promise<{ uuid: string; invoice: string }> {
  const order = await stack.platform.billing.order({ customer_uuid: customer, product_uuid: product, billing_cycle: 'monthly', service_data: { username, domain: `${username.replace(/_/g, '-')}.example.com` } });
  if (paid) await stack.platform.billing.payManually(order.invoice.uuid, 'wire');
  return { uuid: order.service_uuid, invoice: order.invoice.uuid };
}

async function login(who: { email: string; password: string }): Promise<Browser> {
  const b = new Browser(stack.app);
  assert.equal((await b.loginCustomer(who.email, who.password)).statusCode, 303);
  return b;
}

/** GETs `url` until the browser's CSRF cookie has its token made (the page is cacheable from then on); the last body. */
async function warm(b: Browser, url: string): Promise<string> {
  await b.get(url);
  const page = await b.get(url);
  assert.equal(page.statusCode, 200);
  return page.body;
}

/** Alice logged in, with her new paid service `username`'s page kept (answered without a read); its URL. */
async function keptPage(username: string): Promise<{ b: Browser; url: string; uuid: string }> {
  const { uuid } = await service(alice, username);
  const b = await login(ALICE);
  const url = `/client/services/${uuid}`;
  await warm(b, url);
  assert.equal((await load(b, url)).reads, 0);
  return { b, url, uuid };
}

/** The page at `url` with the number of service page reads it took. */
async function load(b: Browser, url: string): Promise<{ status: number; body: string; reads: number }> {
  pageReads = 0;
  const page = await b.get(url);
  return { status: page.statusCode, body: page.body, reads: pageReads };
}

test('a service page is read and rendered once, then answered as rendered while nothing is written', async () => {
  const { uuid } = await service(alice, 'alice_once');
  const b = await login(ALICE);
  const url = `/client/services/${uuid}`;
  const rendered = await warm(b, url);
  const again = await load(b, url);
  assert.equal(again.status, 200);
  assert.equal(again.reads, 0, 'answered without reading the service');
  assert.equal(again.body, rendered);
  assert.match(again.body, /<p id="tab-overview">Account alice_once is \w+<\/p>/);
  assert.equal((await load(b, `${url}?tab=connect`)).reads, 1, 'another tab is another page');
  assert.equal((await load(b, `${url}?tab=connect`)).reads, 0);
  pageReads = 0;
  const de = await b.get(`${url}?tab=connect`, { 'accept-language': 'de-DE' });
  assert.equal(pageReads, 1, 'another locale is another page');
  assert.match(de.body, /id="tab-since"/);
});

test('a change to the service, its billing, its invoices or its product shows on the next request', async () => {
  const { uuid, invoice } = await service(alice, 'alice_change', false);
  const b = await login(ALICE);
  const url = `/client/services/${uuid}`;
  assert.match(await warm(b, url), /id="awaiting-payment"/);
  assert.equal((await load(b, url)).reads, 0);

  await stack.platform.billing.payManually(invoice, 'wire');
  const paid = await load(b, url);
  assert.equal(paid.reads, 1);
  assert.doesNotMatch(paid.body, /id="awaiting-payment"/, 'the paid invoice');
  assert.match(paid.body, /id="billing-state">active</);

  await stack.platform.services.saveServiceData(uuid, { username: 'alice_renamed', domain: 'alice-change.example.com' });
  assert.match((await load(b, url)).body, /Account alice_renamed is \w+/, 'the service data');

  await stack.platform.services.writeProvisionStatus(uuid, 'suspended');
  assert.match((await load(b, url)).body, /Account alice_renamed is suspended/, 'the status, in the module\'s tab');

  await stack.platform.recurring.cancel(uuid, 'period_end', 'admin');
  assert.match((await load(b, url)).body, /id="cancel-note"/, 'the billing period');

  await stack.platform.catalogue.updateProduct(product, { server_location: 'ams', plan_type: 'premium', disk_space: 10, bandwidth: 100 }, { name: 'Renamed Plan' });
  const renamed = await load(b, url);
  assert.match(renamed.body, /class="product-name">Renamed Plan</, 'the product');
  assert.equal((await load(b, url)).body, renamed.body);
  await stack.platform.catalogue.updateProduct(product, { server_location: 'ams', plan_type: 'premium', disk_space: 10, bandwidth: 100 }, { name: 'Cache Plan' });
});

test('a write by another connection to the database (another process) shows on the next request', async () => {
  const { b, url, uuid } = await keptPage('alice_other');
  const other = new Database(join(stack.dataDir, PLATFORM_DB_FILE));
  try {
    other.pragma('busy_timeout = 5000');
    other.prepare("UPDATE services SET provision_status = 'completed' WHERE uuid = ?").run(uuid);
  } finally {
    other.close();
  }
  const after = await load(b, url);
  assert.equal(after.reads, 1);
  assert.match(after.body, /Account alice_other is completed/);
});

test('a customer never gets another customer\'s page, not even with the same browser cookies', async () => {
  const { uuid: mine } = await service(alice, 'alice_own');
  const { uuid: theirs } = await service(bob, 'bob_own');
  const a = await login(ALICE);
  await warm(a, `/client/services/${mine}`);
  assert.equal((await load(a, `/client/services/${mine}`)).reads, 0);

  // Bob logs in on Alice's browser: the same CSRF cookie, so the same token.
  const b = await login(BOB);
  b.jar.set(CSRF_COOKIE, a.jar.get(CSRF_COOKIE)!);
  const refused = await load(b, `/client/services/${mine}`);
  assert.equal(refused.status, 404);
  assert.doesNotMatch(refused.body, /alice_own/);
  await warm(b, `/client/services/${theirs}`);
  const own = await load(b, `/client/services/${theirs}`);
  assert.equal(own.reads, 0);
  assert.match(own.body, /bob_own/);
  assert.ok(own.body.includes(BOB.email) && !own.body.includes(ALICE.email));
  assert.equal((await load(b, `/client/services/${mine}`)).status, 404, 'still refused once Bob\'s page is kept');
  assert.match((await load(a, `/client/services/${mine}`)).body, /alice_own/);
});

test('a tab without cache: store is rendered on every request; a failed tab is never kept', async () => {
  const { uuid } = await service(alice, 'alice_live');
  const b = await login(ALICE);
  const url = `/client/services/${uuid}?tab=live`;
  await warm(b, url);
  const first = await load(b, url);
  const second = await load(b, url);
  assert.equal(first.reads, 1);
  assert.equal(second.reads, 1);
  const count = (body: string) => Number(/Rendered (\d+) times/.exec(body)?.[1]);
  assert.equal(count(second.body), count(first.body) + 1);

  TabProduct.liveFails = true;
  assert.match((await load(b, url)).body, /This part of the page could not be loaded/);
  TabProduct.liveFails = false;
  assert.match((await load(b, url)).body, /Rendered \d+ times/, 'the failure was not kept');
});

test('a logout refuses the session cookie at once, although its session and pages were kept', async () => {
  const { b, url } = await keptPage('alice_out');
  const copy = new Browser(stack.app);
  for (const [name, value] of b.jar) copy.jar.set(name, value);
  assert.equal((await copy.get(url)).statusCode, 200);
  assert.equal((await b.post('/client/logout')).statusCode, 303);
  const refused = await copy.get(url);
  assert.equal(refused.statusCode, 303, 'sent to the login page');
  assert.match(String(refused.headers.location), /^\/client\/login/);
});
