// Actions on one service take effect in the order the admin gave them, whatever the worker slots (panel slowed down).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, panel, until } from '../../fixtures/platform/http.ts';
import { startStack, type Stack } from '../../fixtures/platform/setup.ts';
import { startSlowProxy, type SlowProxy } from '../../fixtures/platform/slow-proxy.ts';

let stack: Stack;
let proxy: SlowProxy;
let productUuid: string;

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);

before(async () => {
  stack = await startStack({ workers: 4 });
  proxy = await startSlowProxy(stack.panel.url, { before: 200, after: 100 });
  const registered = await api('POST', '/panels', { location: 'ams', api_url: proxy.url, access_hash: stack.panel.accessHash });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  productUuid = (await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 20 } })).body.uuid;
});

after(async () => {
  await proxy?.close();
  await stack?.close();
});

async function newService(username: string): Promise<string> {
  return (await api('POST', '/services', { product_uuid: productUuid, service_data: { username } })).body.uuid;
}

/** Waits until every task of the service is final; answers the service view. */
async function settled(uuid: string): Promise<any> {
  await until(async () => {
    const tasks = (await api('GET', `/tasks?tag=${encodeURIComponent(`service:${uuid}`)}`)).body.tasks as any[];
    return tasks.every((t) => ['completed', 'failed', 'duplicate'].includes(t.status)) ? true : undefined;
  }, 30_000, 50);
  return (await api('GET', `/services/${uuid}`)).body;
}

test('termination right after create waits for the account and deletes it: terminated, no account left', async () => {
  const uuid = await newService('quick_quit');
  assert.deepEqual((await api('POST', `/services/${uuid}/create`)).body, { status: 'success' });
  assert.deepEqual((await api('POST', `/services/${uuid}/termination`)).body, { status: 'success' });
  const view = await settled(uuid);
  assert.equal(view.provision_status, 'terminated');
  const account = await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${view.provision_data.account_name}`);
  assert.equal(account.error, 'Account not found');
});

test('suspend, unsuspend, suspend in a row leave the service suspended and its account disabled', async () => {
  const uuid = await newService('flip_flop');
  await api('POST', `/services/${uuid}/create`);
  for (const action of ['suspend', 'unsuspend', 'suspend']) assert.deepEqual((await api('POST', `/services/${uuid}/${action}`)).body, { status: 'success' });
  const view = await settled(uuid);
  assert.equal(view.provision_status, 'suspended');
  const account = await panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${view.provision_data.account_name}`);
  assert.equal(account.msg.status, 'disable');
  const methods = ((await api('GET', `/tasks?tag=${encodeURIComponent(`service:${uuid}`)}`)).body.tasks as any[]).map((t) => `${t.input.method}:${t.status}`).reverse();
  assert.deepEqual(methods, ['createJob:completed', 'suspendJob:completed', 'unsuspendJob:completed', 'suspendJob:completed']);
});
