// Product data and service data methods, and the client-area tab hooks of a Product module.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { callClientAreaController, clientAreaVariables, renderClientAreaTab } from '../../../module/contract/client-area.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';
import { SampleProduct } from './helpers/sample-product.ts';

let p: TestPlatform;
let product: SampleProduct;
beforeEach(() => {
  p = makePlatform();
  product = new SampleProduct(p.ctx);
});
afterEach(() => p.cleanup());

test('getProductData fills missing fields with an empty string and keeps extra ones', () => {
  const out = product.getProductData({ plan_type: 'basic', extra: 1, bandwidth: null });
  assert.deepEqual(out, { plan_type: 'basic', extra: 1, bandwidth: '', server_location: '', disk_space: '' });
  assert.deepEqual(product.product_data, out);
});

test('saveProductData: 200 with the validated data, or 422 with the error bag', async () => {
  const ok = await product.saveProductData({ server_location: ' <b>Amsterdam</b> ', plan_type: 'premium', disk_space: '50', bandwidth: 10 });
  assert.deepEqual(ok, { status: 'success', data: { server_location: 'Amsterdam', plan_type: 'premium', disk_space: 50, bandwidth: 10 }, code: 200 });
  assert.deepEqual(product.product_data, ok.status === 'success' ? ok.data : null);
  const bad = await product.saveProductData(product.getProductData({ plan_type: 'gold' }));
  assert.equal(bad.status, 'error');
  assert.equal(bad.code, 422);
  assert.ok(bad.status === 'error');
  assert.deepEqual(Object.keys(bad.errors).sort(), ['bandwidth', 'disk_space', 'plan_type', 'server_location']);
  assert.equal(bad.message, bad.errors);
});

test('getServiceData lower-cases and trims the domain, trims the username, notes default null', () => {
  assert.deepEqual(product.getServiceData({ domain: '  MyHost.Example.NET ', username: '  bob  ' }), { domain: 'myhost.example.net', username: 'bob', notes: null });
  product.service_data = { domain: 'A.IO', username: 'x ', notes: 'n' };
  assert.deepEqual(product.getServiceData(), { domain: 'a.io', username: 'x', notes: 'n' });
});

test('saveServiceData validates and stores on the current service', async () => {
  p.services.add('svc-1');
  assert.equal(await product.loadService('svc-1'), true);
  assert.equal(await product.loadService('nope'), false);
  const ok = await product.saveServiceData({ domain: ' Shop.Example.com', username: 'shop_1' });
  assert.deepEqual(ok, { status: 'success', data: { domain: 'shop.example.com', username: 'shop_1', notes: null }, code: 200 });
  assert.deepEqual(p.services.get('svc-1')?.service_data, { domain: 'shop.example.com', username: 'shop_1', notes: null });
  const bad = await product.saveServiceData({ domain: 'shop', username: 'ab' });
  assert.deepEqual(bad, {
    status: 'error',
    message: { domain: ['The domain field format is invalid.'], username: ['The username field must be at least 3 characters.'] },
    errors: { domain: ['The domain field format is invalid.'], username: ['The username field must be at least 3 characters.'] },
    code: 422,
  });
  assert.equal(p.services.get('svc-1')?.service_data.username, 'shop_1', 'a failed save changes nothing');
});

test('client-area tab: variables_<tab>() rendered into its template, escaped', async () => {
  product.service_data = { domain: 'example.com', notes: '<script>x</script>' };
  assert.deepEqual(await clientAreaVariables(product, 'general'), { domain: 'example.com', status: 'active', greeting: '<script>x</script>' });
  const html = await renderClientAreaTab(product, 'general');
  assert.match(html, /<h3>example\.com<\/h3>/);
  assert.match(html, /&lt;script&gt;x&lt;\/script&gt;/);
  await assert.rejects(renderClientAreaTab(product, 'billing'), /unknown client-area tab/);
  assert.deepEqual(await clientAreaVariables(product, 'billing'), {});
});

test('client-area AJAX: controllerClient_<tab><Method> → {success:true,data} / 500 {success:false} / 404', async () => {
  product.service_data = { domain: 'example.com' };
  const request = (query: Record<string, unknown> = {}) => ({ method: 'GET', headers: {}, query, body: undefined });
  assert.deepEqual(await callClientAreaController(product, 'general', 'get', request()), { status: 200, body: { success: true, data: { domain: 'example.com' } } });
  assert.deepEqual(await callClientAreaController(product, 'general', 'Get', request({ fail: 1 })), {
    status: 500,
    body: { success: false, message: 'An unexpected error occurred' },
  });
  const [log] = (await p.logs.read({ level: 'error' }));
  assert.equal(log.response, 'backend down: password=[redacted]');
  assert.equal((await callClientAreaController(product, 'general', 'Post', request())).status, 404);
  assert.equal((await callClientAreaController(product, 'billing', 'Get', request())).status, 404);
  assert.equal((await callClientAreaController(product, '__proto__', 'Get', request())).status, 404);
});
