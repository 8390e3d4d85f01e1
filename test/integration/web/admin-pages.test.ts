// Admin pages through inject: a product form shows the module's saveProductData 422 bag at each field and saves once
// fixed; a service is created from the form (422 bag at its fields), its action runs behind a confirmation page and
// shows in the task history; the services list filters and pages; modules show activate/deactivate answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
let b: Browser;

before(async () => {
  stack = await startWebStack();
  await stack.web.admins.create({ email: 'root@example.com', password: 'Root-Pass-1', role: 'Administrator' });
  b = new Browser(stack.app);
  await b.loginAdmin('root@example.com', 'Root-Pass-1');
});

after(async () => {
  await stack?.close();
});

/** Text of the error shown under the field `name`. */
function fieldError(html: string, name: string): string | null {
  return new RegExp(`<p class="field-error"[^>]*data-field="${name}">([^<]*)</p>`).exec(html)?.[1].trim() ?? null;
}

test('product form: the module page is shown, the 422 bag sits at each field, fixing it saves the product', async () => {
  const form = await b.get('/admin/products/new?module=TabProduct');
  assert.equal(form.statusCode, 200);
  assert.match(form.body, /id="module-product-page"/, 'getProductPage() shown');
  for (const field of ['server_location', 'plan_type', 'disk_space', 'bandwidth']) assert.match(form.body, new RegExp(`name="${field}"`));
  const bad = await b.post('/admin/products', { module: 'TabProduct', server_location: '', plan_type: 'gold', disk_space: '5000', bandwidth: 'x' });
  assert.equal(bad.statusCode, 422);
  assert.equal(fieldError(bad.body, 'server_location'), 'The server location field is required.');
  assert.match(fieldError(bad.body, 'plan_type') ?? '', /selected plan type is invalid/i);
  assert.equal(fieldError(bad.body, 'disk_space'), 'The disk space field must not be greater than 1000.');
  assert.equal(fieldError(bad.body, 'bandwidth'), 'The bandwidth field must be an integer.');
  assert.equal(fieldError(bad.body, 'name'), 'The name field is required.');
  assert.match(bad.body, /<option value="gold" selected>/, 'entered values are kept (a fixed-value field is a select box)');
  assert.match(bad.body, /<select id="f-plan_type" name="plan_type"/);
  assert.equal((await stack.platform.catalogue.list()).length, 0);
  const ok = await b.post('/admin/products', { module: 'TabProduct', name: 'Premium', server_location: 'ams', plan_type: 'premium', disk_space: '50', bandwidth: '100' });
  assert.equal(ok.statusCode, 303);
  const [product] = (await stack.platform.catalogue.list());
  assert.deepEqual(product.product_data, { server_location: 'ams', plan_type: 'premium', disk_space: 50, bandwidth: 100 });
  assert.equal(product.name, 'Premium');
  const edit = await b.post(`/admin/products/${product.uuid}`, { name: 'Premium', server_location: 'ams', plan_type: 'premium', disk_space: '0', bandwidth: '100' });
  assert.equal(edit.statusCode, 422);
  assert.equal(fieldError(edit.body, 'disk_space'), 'The disk space field must be at least 1.');
  assert.equal((await b.post(`/admin/products/${product.uuid}`, { name: 'Basic', server_location: 'fra', plan_type: 'basic', disk_space: '10', bandwidth: '20' })).statusCode, 303);
  assert.equal((await stack.platform.catalogue.get(product.uuid))!.product_data.server_location, 'fra');
});

test('service: the form shows the 422 bag, then create → confirm → action queued, in the task history', async () => {
  const [product] = (await stack.platform.catalogue.list());
  await stack.web.customers.create({ email: 'carol@example.com', password: 'Carol-Pass-1' });
  await b.get('/admin/services/new');
  const bad = await b.post('/admin/services', { product_uuid: product.uuid, username: 'x' });
  assert.equal(bad.statusCode, 422);
  assert.match(fieldError(bad.body, 'username') ?? '', /at least 3 characters/);
  const noOwner = await b.post('/admin/services', { product_uuid: product.uuid, username: 'carol_vpn', customer_email: 'nobody@example.com' });
  assert.equal(noOwner.statusCode, 422);
  // TabProduct keeps the spec's service pattern: a domain is required too.
  const created = await b.post('/admin/services', { product_uuid: product.uuid, username: 'carol_vpn', customer_email: 'carol@example.com' });
  assert.equal(created.statusCode, 422);
  assert.match(created.body, /domain: The domain field is required/);
  const uuid = (await stack.platform.serviceAdmin.createService(product.uuid, { domain: 'carol.example.com', username: 'carol_vpn' })).uuid;
  const detail = await b.get(`/admin/services/${uuid}`);
  assert.equal(detail.statusCode, 200);
  assert.match(detail.body, /id="module-service-page">TabProduct service carol_vpn/);
  assert.match(detail.body, /id="provision-status">pending</);
  const confirm = await b.get(`/admin/services/${uuid}/confirm/create`);
  assert.match(confirm.body, /Run create\?/);
  const run = await b.post(`/admin/services/${uuid}/actions/create`);
  assert.equal(run.statusCode, 303);
  const after = await b.get(`/admin/services/${uuid}`);
  assert.match(after.body, /create: queued/);
  assert.match(after.body, /id="provision-status">processing</);
  assert.match(after.body, /<td>createJob<\/td>/, 'task history lists the queued job');
  assert.equal((await b.post(`/admin/services/${uuid}/owner`, { customer_email: 'carol@example.com' })).statusCode, 303);
  assert.match((await b.get(`/admin/services/${uuid}`)).body, /Owner: carol@example.com/);
});

test('services list: filters by status and pages 50 at a time', async () => {
  const [product] = (await stack.platform.catalogue.list());
  for (let i = 0; i < 60; i++) await stack.platform.serviceAdmin.createService(product.uuid, { domain: `s${i}.example.com`, username: `user_${i}` });
  const first = await b.get('/admin/services?status=pending');
  const rows = (html: string) => (html.match(/<tr><td><a href="\/admin\/services\//g) ?? []).length;
  assert.equal(rows(first.body), 50);
  assert.match(first.body, /Page 1 of 2 \(60 in all\)/);
  assert.match(first.body, /href="\/admin\/services\?status&#x3D;pending&amp;page&#x3D;2" rel="next"/);
  const second = await b.get('/admin/services?status=pending&page=2');
  assert.equal(rows(second.body), 10);
  const processing = await b.get('/admin/services?status=processing');
  assert.equal(rows(processing.body), 1);
  const search = await b.get('/admin/services?q=user_59');
  assert.equal(rows(search.body), 1);
});

test('modules page: deactivate and activate show the module\'s answer', async () => {
  await b.get('/admin/modules');
  const off = await b.post('/admin/module-actions/Plugin/WebPlugin/deactivate');
  assert.equal(off.statusCode, 303);
  assert.match((await b.get('/admin/modules')).body, /Plugin\/WebPlugin deactivate: success/);
  assert.equal((await b.get('/admin/modules/Plugin/WebPlugin/overview')).statusCode, 404, 'a deactivated module has no routes');
  await b.post('/admin/module-actions/Plugin/WebPlugin/activate');
  assert.match((await b.get('/admin/modules')).body, /Plugin\/WebPlugin activate: success/);
  assert.equal((await b.get('/admin/modules/Plugin/WebPlugin/overview')).statusCode, 200);
});

test('dashboard counts services by status; customers page creates customers', async () => {
  const dash = await b.get('/admin');
  assert.match(dash.body, /<strong>60<\/strong> pending/);
  assert.match(dash.body, /<strong>1<\/strong> processing/);
  await b.get('/admin/customers');
  assert.equal((await b.post('/admin/customers', { email: 'dave@example.com', name: 'Dave', password: 'Dave-Pass-1' })).statusCode, 303);
  assert.match((await b.get('/admin/customers')).body, /dave@example.com/);
});
