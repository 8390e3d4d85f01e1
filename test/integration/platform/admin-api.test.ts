// Admin API refusals: bearer tokens, validation error bags, unknown module/product/service/action/task, panel checks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, type Stack } from '../../fixtures/platform/setup.ts';
import { freePort } from '../../fixtures/platform/processes.ts';

let stack: Stack;
let productUuid: string;

before(async () => {
  stack = await startStack({ workers: 1 });
  await registerPanel(stack);
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 10 } });
  productUuid = product.body.uuid;
});

after(async () => {
  await stack?.close();
});

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);

test('without a valid bearer token every admin route answers 401', async () => {
  for (const token of [null, 'vpa_' + '0'.repeat(64), 'nonsense']) {
    for (const [method, path] of [['GET', '/panels'], ['POST', '/products'], ['GET', '/tasks'], ['POST', '/services/x/create']] as const) {
      const res = await admin(stack.platform.url, token, method, path, method === 'POST' ? {} : undefined);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.match(res.body.error, /^unauthorized/);
    }
  }
  const wrongScheme = await fetch(`${stack.platform.url}/api/admin/panels`, { headers: { authorization: `Basic ${stack.token}` } });
  assert.equal(wrongScheme.status, 401);
});

test('invalid product data answers 422 with the error bag of saveProductData', async () => {
  const res = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'nowhere', plan_type: 'gold', bandwidth: 0 } });
  assert.equal(res.status, 422);
  assert.equal(res.body.error, 'invalid product data');
  assert.deepEqual(res.body.errors, {
    server_location: ['The selected server location is invalid.'],
    plan_type: ['The selected plan type is invalid.'],
    bandwidth: ['The bandwidth field must be at least 1.'],
  });
  const missing = await api('POST', '/products', { module: 'VpnProduct', product_data: { bandwidth: 10001 } });
  assert.equal(missing.status, 422);
  assert.deepEqual(missing.body.errors.server_location, ['The server location field is required.']);
  assert.deepEqual(missing.body.errors.plan_type, ['The plan type field is required.']);
  assert.deepEqual(missing.body.errors.bandwidth, ['The bandwidth field must not be greater than 10000.']);
});

test('invalid service data answers 422 with the error bag of saveServiceData', async () => {
  const res = await api('POST', '/services', { product_uuid: productUuid, service_data: { username: 'a!', password: 'short' } });
  assert.equal(res.status, 422);
  assert.equal(res.body.error, 'invalid service data');
  assert.ok(res.body.errors.username.includes('The username field must be at least 3 characters.'));
  assert.ok(res.body.errors.username.includes('The username field must only contain letters, numbers, dashes, and underscores.'));
  assert.ok(res.body.errors.password.includes('The password field must be at least 8 characters.'));
  const missing = await api('POST', '/services', { product_uuid: productUuid, service_data: {} });
  assert.equal(missing.status, 422);
  assert.deepEqual(missing.body.errors, { username: ['The username field is required.'] });
  const tooLong = await api('POST', '/services', { product_uuid: productUuid, service_data: { username: 'x'.repeat(21) } });
  assert.deepEqual(tooLong.body.errors, { username: ['The username field must not be greater than 20 characters.'] });
});

test('unknown module, product, service, action and task get clear errors', async () => {
  const mod = await api('POST', '/products', { module: 'NoSuchModule', product_data: {} });
  assert.equal(mod.status, 404);
  assert.equal(mod.body.error, 'unknown module: NoSuchModule');
  assert.deepEqual(mod.body.modules, ['VpnProduct']);

  const prod = await api('POST', '/services', { product_uuid: 'missing-product', service_data: { username: 'bob' } });
  assert.equal(prod.status, 404);
  assert.equal(prod.body.error, 'product not found: missing-product');

  const svc = await api('POST', '/services/missing-service/create');
  assert.equal(svc.status, 404);
  assert.equal(svc.body.error, 'service not found: missing-service');
  assert.equal((await api('GET', '/services/missing-service')).body.error, 'service not found: missing-service');

  const created = await api('POST', '/services', { product_uuid: productUuid, service_data: { username: 'bob' } });
  assert.equal(created.status, 201);
  const action = await api('POST', `/services/${created.body.uuid}/explode`);
  assert.equal(action.status, 404);
  assert.match(action.body.error, /^unknown action: explode \(one of create, suspend, unsuspend, termination, change_package\)$/);
  const noTarget = await api('POST', `/services/${created.body.uuid}/change_package`, {});
  assert.equal(noTarget.status, 422);
  assert.equal(noTarget.body.error, 'change_package needs product_uuid');
  const badTarget = await api('POST', `/services/${created.body.uuid}/change_package`, { product_uuid: 'nope' });
  assert.equal(badTarget.status, 404);
  assert.equal(badTarget.body.error, 'product not found: nope');

  const task = await api('GET', '/tasks/no-such-task');
  assert.equal(task.status, 404);
  assert.equal(task.body.error, 'task not found: no-such-task');
  const retry = await api('POST', '/tasks/no-such-task/retry');
  assert.equal(retry.status, 404);
  assert.equal(retry.body.error, 'task not found: no-such-task');

  const route = await api('GET', '/nothing-here');
  assert.equal(route.status, 404);
});

test('malformed bodies answer 400 naming the field', async () => {
  const res = await api('POST', '/products', { module: 'VpnProduct', product_data: 'not an object' });
  assert.equal(res.status, 400);
  assert.match(res.body.error, /^invalid request: product_data/);
});

test('a panel that refuses the hash or cannot be reached is not registered', async () => {
  const wrongHash = await api('POST', '/panels', { location: 'fra', api_url: stack.panel.url, access_hash: 'f'.repeat(80) });
  assert.equal(wrongHash.status, 422);
  assert.equal(wrongHash.body.error, 'Not authorized');
  const port = await freePort();
  const down = await api('POST', '/panels', { location: 'fra', api_url: `http://127.0.0.1:${port}`, access_hash: stack.panel.accessHash });
  assert.equal(down.status, 422);
  assert.match(down.body.error, /^cannot reach panel: .*ECONNREFUSED/);
  const bad = await api('POST', '/panels', { location: 'fra', api_url: 'ftp://x', access_hash: 'x' });
  assert.equal(bad.status, 400);
  assert.deepEqual((await api('GET', '/panels')).body.panels.map((p: any) => p.location), ['ams']);
});

test('retry is refused for a task that has not failed', async () => {
  const created = await api('POST', '/services', { product_uuid: productUuid, service_data: { username: 'frank' } });
  await api('POST', `/services/${created.body.uuid}/create`);
  const tasks = (await api('GET', `/tasks?tag=service:${created.body.uuid}`)).body.tasks;
  assert.equal(tasks.length, 1);
  const res = await api('POST', `/tasks/${tasks[0].id}/retry`);
  assert.equal(res.status, 409);
  assert.match(res.body.error, /only a failed task can be retried/);
});
