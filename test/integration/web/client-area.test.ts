// Web host, client side (inject): customer login and session expiry, "my services" shows only the customer's own,
// the module's tabs rendered through variables_<tab>(), controllerClient_* JSON shapes ({success, data} 200,
// {success:false, message} 500 with the real error only in the module log), a file answer passed through, ownership
// (someone else's or a made-up service id answers 404 on every route), CSRF on AJAX posts, password reset by token.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CUSTOMER_COOKIE } from '../../../module/platform/web/web-deps.ts';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
let mine: string;
let theirs: string;
const ALICE = { email: 'alice@example.com', password: 'Alice-Pass-1' };
const BOB = { email: 'bob@example.com', password: 'Bob-Pass-12' };

before(async () => {
  stack = await startWebStack();
  const product = await stack.platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'basic', disk_space: 10, bandwidth: 100 });
  const alice = await stack.web.customers.create(ALICE);
  const bob = await stack.web.customers.create(BOB);
  mine = (await stack.platform.serviceAdmin.createService(product.uuid, { domain: 'alice.example.com', username: 'alice_vpn' })).uuid;
  theirs = (await stack.platform.serviceAdmin.createService(product.uuid, { domain: 'bob.example.com', username: 'bob_vpn' })).uuid;
  await stack.web.customers.queries.assignService(mine, alice.uuid);
  await stack.web.customers.queries.assignService(theirs, bob.uuid);
});

after(async () => {
  await stack?.close();
});

async function alice(): Promise<Browser> {
  const b = new Browser(stack.app);
  const res = await b.loginCustomer(ALICE.email, ALICE.password);
  assert.equal(res.statusCode, 303);
  return b;
}

test('login: wrong password refused, right one gives a client-area session (path /client)', async () => {
  const b = new Browser(stack.app);
  assert.equal((await b.get('/client')).statusCode, 303);
  assert.equal((await b.loginCustomer(ALICE.email, 'nope-nope-1')).statusCode, 401);
  const ok = await b.loginCustomer(ALICE.email, ALICE.password);
  assert.equal(ok.statusCode, 303);
  assert.equal(ok.cookies.find((c) => c.name === CUSTOMER_COOKIE)?.path, '/client');
  assert.equal((await b.get('/admin')).statusCode, 303, 'a customer session opens no admin page');
});

test('my services lists only the customer\'s own service', async () => {
  const b = await alice();
  const page = await b.get('/client');
  assert.equal(page.statusCode, 200);
  assert.ok(page.body.includes(`/client/services/${mine}`));
  assert.ok(!page.body.includes(theirs));
  assert.match(page.body, /alice_vpn/);
  assert.doesNotMatch(page.body, /bob_vpn/);
});

test('the service page renders the module\'s tabs through variables_<tab>(); a tab loads alone for AJAX', async () => {
  const b = await alice();
  const page = await b.get(`/client/services/${mine}`);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<p id="tab-overview">Account alice_vpn is pending<\/p>/);
  assert.match(page.body, /data-tab="connect"/);
  const connect = await b.get(`/client/services/${mine}?tab=connect`);
  assert.match(connect.body, /id="tab-connect"/);
  const fragment = await b.get(`/client/services/${mine}/tabs/overview`);
  assert.equal(fragment.body.trim(), '<p id="tab-overview">Account alice_vpn is pending</p>');
  assert.equal((await b.get(`/client/services/${mine}/tabs/billing`)).statusCode, 404);
});

test('a module\'s tab shows times in the reader\'s locale (Accept-Language), on the page and loaded alone', async () => {
  const b = await alice();
  const created = (await stack.platform.serviceAdmin.describe(mine)).created_at;
  const inLocale = (locale: string) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(created));
  const since = (locale: string) => `<p id="tab-since">Since <time datetime="${created}" data-local>${inLocale(locale)} UTC</time></p>`;
  assert.ok((await b.get(`/client/services/${mine}?tab=connect`)).body.includes(since('en-GB')), 'en-GB without Accept-Language');
  assert.ok((await b.get(`/client/services/${mine}?tab=connect`, { 'accept-language': 'de-DE,de;q=0.9' })).body.includes(since('de-DE')));
  assert.ok((await b.get(`/client/services/${mine}/tabs/connect`, { 'accept-language': 'fr-FR' })).body.includes(since('fr-FR')));
  assert.notEqual(inLocale('de-DE'), inLocale('en-GB'));
});

test('controllerClient_* answers {success:true, data} and {success:false, message} with 500; the real error goes to the module log', async () => {
  const b = await alice();
  await b.get(`/client/services/${mine}`);
  const ok = await b.json('GET', `/client/services/${mine}/ajax/overview/get`);
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), { success: true, data: { username: 'alice_vpn', service_uuid: mine } });
  const boom = await b.json('GET', `/client/services/${mine}/ajax/overview/boom`);
  assert.equal(boom.statusCode, 500);
  assert.deepEqual(boom.json(), { success: false, message: 'An unexpected error occurred' });
  assert.doesNotMatch(boom.body, /secret detail/);
  const logs = (await stack.platform.moduleLogStore.read({})).filter((l) => l.action === 'client_area.overview');
  assert.ok(logs.some((l) => JSON.stringify(l.response).includes('panel exploded')), 'logged for the admin');
  const missing = await b.json('GET', `/client/services/${mine}/ajax/overview/nothing`);
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.json().success, false);
});

test('a handler answering a file has it passed through with its headers', async () => {
  const b = await alice();
  const file = await b.get(`/client/services/${mine}/ajax/connect/download`);
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-disposition'], 'attachment; filename="alice_vpn.conf"');
  assert.equal(file.body, '[Interface]\n# alice_vpn\n');
});

test('ownership: someone else\'s service and a made-up id answer the same 404 on every route', async () => {
  const b = await alice();
  await b.get('/client');
  for (const id of [theirs, '00000000-0000-4000-8000-000000000000']) {
    for (const url of [`/client/services/${id}`, `/client/services/${id}/tabs/overview`]) {
      const res = await b.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /bob_vpn/);
    }
    const get = await b.json('GET', `/client/services/${id}/ajax/overview/get`);
    assert.equal(get.statusCode, 404);
    assert.deepEqual(get.json(), { success: false, message: `service not found: ${id}` });
    const post = await b.json('POST', `/client/services/${id}/ajax/overview/get`, {});
    assert.equal(post.statusCode, 404);
    assert.equal((await b.get(`/client/services/${id}/ajax/connect/download`)).statusCode, 404);
  }
});

test('an AJAX post without the CSRF header is refused', async () => {
  const b = await alice();
  await b.get(`/client/services/${mine}`);
  const token = b.csrf;
  b.csrf = '';
  const refused = await b.json('POST', `/client/services/${mine}/ajax/overview/get`, {});
  assert.equal(refused.statusCode, 403);
  b.csrf = token;
  const ok = await b.json('POST', `/client/services/${mine}/ajax/overview/get`, {});
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.json().success, true);
});

test('the customer session expires after 30 idle minutes', async () => {
  const b = await alice();
  stack.clock.advance(29 * 60_000);
  assert.equal((await b.get('/client')).statusCode, 200);
  stack.clock.advance(31 * 60_000);
  assert.equal((await b.get('/client')).statusCode, 303);
});

test('password reset: the link comes through the hook, works once, and the old sessions end', async () => {
  const links: string[] = [];
  const off = stack.platform.hooks.on('customer.password_reset', (event) => void links.push(event.reset_path));
  try {
    const old = await alice();
    const b = new Browser(stack.app);
    await b.get('/client/password/forgot');
    const unknown = await b.post('/client/password/forgot', { email: 'nobody@example.com' });
    const known = await b.post('/client/password/forgot', { email: ALICE.email });
    assert.equal(unknown.statusCode, 200);
    assert.equal(known.body.replace(/value="[^"]+"/g, ''), unknown.body.replace(/value="[^"]+"/g, ''), 'same answer either way');
    assert.equal(links.length, 1);
    const form = await b.get(links[0]);
    assert.equal(form.statusCode, 200);
    const token = decodeURIComponent(links[0].split('token=')[1]);
    assert.equal((await b.post('/client/password/reset', { token, password: 'short' })).statusCode, 422);
    assert.equal((await b.post('/client/password/reset', { token, password: 'Alice-New-Pass-2' })).statusCode, 303);
    assert.equal((await b.post('/client/password/reset', { token, password: 'Alice-Other-3' })).statusCode, 400, 'single use');
    assert.equal((await b.get(links[0])).statusCode, 400);
    assert.equal((await old.get('/client')).statusCode, 303, 'sessions made with the old password end');
    assert.equal((await new Browser(stack.app).loginCustomer(ALICE.email, 'Alice-New-Pass-2')).statusCode, 303);
    const forged = `${token.split('.')[0]}.AAAA`;
    assert.equal((await b.get(`/client/password/reset?token=${encodeURIComponent(forged)}`)).statusCode, 400);
    await stack.web.customers.setPassword((await stack.web.customers.queries.findByEmail(ALICE.email))!.uuid, ALICE.password);
  } finally {
    off();
  }
});
