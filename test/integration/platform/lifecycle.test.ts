// A real panel process and the platform over HTTP: register, product, service, then the whole provisioning lifecycle.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { HOOK_EVENTS } from '../../../hooks.ts';
import { REDACT_PATHS } from '../../../module/platform/logger.ts';
import { admin, panel } from '../../fixtures/platform/http.ts';
import { createServer, registerPanel, startStack, waitForAction, type Stack } from '../../fixtures/platform/setup.ts';
import { sql } from 'kysely';

let stack: Stack;
const events: Array<{ event: string; service_uuid: string; reason?: string }> = [];
/** Every platform log line (debug level, the platform's own redaction settings). */
const logLines: string[] = [];
/** The password VpnProduct generated for a service (checked absent from the database and logs). */
let generatedPassword = '';

before(async () => {
  const logger = pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, { write: (line: string) => void logLines.push(line) });
  stack = await startStack({ logger });
  await registerPanel(stack);
  for (const event of HOOK_EVENTS) {
    stack.platform.platform.hooks.on(event, (payload) => {
      events.push({ event, service_uuid: payload.service_uuid, reason: payload.reason });
    });
  }
});

after(async () => {
  await stack?.close();
});

const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);
const account = (name: string) => panel(stack.panel.url, stack.panel.accessHash, 'GET', `/account/${name}`);

test('registered panels are listed without their access hash', async () => {
  const res = await api('GET', '/panels');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.panels.map((p: any) => p.location), ['ams']);
  assert.equal(JSON.stringify(res.body).includes(stack.panel.accessHash), false);
  assert.equal('access_hash' in res.body.panels[0], false);
});

test('create → suspend → unsuspend → change_package → termination drive the panel account', async () => {
  const basic = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 20 } });
  assert.equal(basic.status, 201, JSON.stringify(basic.body));
  const premium = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'premium', bandwidth: '300', wg_server: 'main' } });
  assert.equal(premium.status, 201, JSON.stringify(premium.body));
  assert.equal(premium.body.product_data.bandwidth, 300);

  const created = await api('POST', '/services', { product_uuid: basic.body.uuid, service_data: { username: '  carol_1 ', password: 'Secr3tPassw0rd' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.provision_status, 'pending');
  const uuid: string = created.body.uuid;

  assert.deepEqual((await api('POST', `/services/${uuid}/create`)).body, { status: 'success' });
  const createTask = await waitForAction(stack, uuid, 'create');
  assert.equal(createTask.status, 'completed', createTask.lastError);
  let service = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(service.provision_status, 'completed');
  const name = service.provision_data.account_name;
  assert.match(name, /^svc_[0-9a-f]{12}$/);
  assert.equal(service.provision_data.panel_location, 'ams');
  assert.equal(service.provision_data.wg_server, 'main');
  assert.equal(JSON.stringify(service).includes('Secr3tPassw0rd'), false, 'no password in the service view');
  assert.equal(service.service_data.username, 'carol_1');
  let acc = await account(name);
  assert.equal(acc.error, '');
  assert.equal(acc.msg.username, 'carol_1');
  assert.equal(acc.msg.password, 'Secr3tPassw0rd');
  assert.equal(acc.msg.status, 'enable');
  assert.equal(acc.msg.b_download, '20');
  assert.equal(acc.msg.b_upload, '20');
  assert.equal(acc.msg.allowed_IPs.replace(/\/32$/, ''), service.provision_data.address.replace(/\/32$/, ''));

  await api('POST', `/services/${uuid}/suspend`);
  assert.equal((await waitForAction(stack, uuid, 'suspend')).status, 'completed');
  assert.equal((await api('GET', `/services/${uuid}`)).body.provision_status, 'suspended');
  assert.equal((await account(name)).msg.status, 'disable');

  await api('POST', `/services/${uuid}/unsuspend`);
  assert.equal((await waitForAction(stack, uuid, 'unsuspend')).status, 'completed');
  assert.equal((await api('GET', `/services/${uuid}`)).body.provision_status, 'completed');
  assert.equal((await account(name)).msg.status, 'enable');

  const change = await api('POST', `/services/${uuid}/change_package`, { product_uuid: premium.body.uuid });
  assert.deepEqual(change.body, { status: 'success' });
  assert.equal((await waitForAction(stack, uuid, 'change_package')).status, 'completed');
  service = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(service.product_uuid, premium.body.uuid);
  assert.equal(service.provision_status, 'completed');
  acc = await account(name);
  assert.equal(acc.msg.b_download, '300');
  assert.equal(acc.msg.b_upload, '300');

  await api('POST', `/services/${uuid}/termination`);
  assert.equal((await waitForAction(stack, uuid, 'termination')).status, 'completed');
  assert.equal((await api('GET', `/services/${uuid}`)).body.provision_status, 'terminated');
  assert.equal((await account(name)).error, 'Account not found');
  assert.deepEqual(events.filter((e) => e.service_uuid === uuid).map((e) => e.event), [
    'service.created', 'service.provisioned', 'service.suspended', 'service.unsuspended', 'service.package_changed', 'service.terminated',
  ]);
});

test('a generated password satisfies the pattern and reaches the panel; a retried create adopts the account', async () => {
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'enterprise', bandwidth: 1000 } });
  const created = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'dave-2', notes: 'vip' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const uuid = created.body.uuid;
  await api('POST', `/services/${uuid}/create`);
  assert.equal((await waitForAction(stack, uuid, 'create')).status, 'completed');
  const first = (await api('GET', `/services/${uuid}`)).body;
  const acc = await account(first.provision_data.account_name);
  assert.match(acc.msg.password, /^(?=.*[a-z])(?=.*[A-Z])(?=.*\d).{8,}$/);
  generatedPassword = acc.msg.password;

  // create again: the panel answers `The name is already in use` and the job adopts the same account.
  await api('POST', `/services/${uuid}/create`);
  const tasks = (await api('GET', `/tasks?tag=service:${uuid}`)).body.tasks;
  const again = tasks.filter((t: any) => t.tags.includes('create'));
  assert.equal(again.length, 2);
  assert.equal((await waitForAction(stack, uuid, 'create')).status, 'completed');
  const second = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(second.provision_status, 'completed');
  assert.deepEqual(second.provision_data, first.provision_data);
  const all = await panel(stack.panel.url, stack.panel.accessHash, 'GET', '/account');
  assert.equal((all.msg as any[]).filter((a) => a.username === 'dave-2').length, 1);
});

test('a panel error fails the attempt with the panel text, retries follow tries and the service ends failed with it', async () => {
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 5, wg_server: 'nosuch' } });
  assert.equal(product.status, 201);
  const created = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'erin' } });
  const uuid = created.body.uuid;
  await api('POST', `/services/${uuid}/create`);
  const task = await waitForAction(stack, uuid, 'create', 60_000);
  assert.equal(task.status, 'failed');
  assert.equal(task.lastError, 'Wireguard server not found');
  assert.equal(task.attempts, task.options.tries);
  const service = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(service.provision_status, 'failed');
  assert.equal(service.status_reason, 'Wireguard server not found');
  assert.deepEqual(events.filter((e) => e.service_uuid === uuid), [
    { event: 'service.created', service_uuid: uuid, reason: undefined },
    { event: 'service.failed', service_uuid: uuid, reason: 'Wireguard server not found' },
  ]);
  const logs = (await stack.platform.platform.moduleLogStore.read({ name: 'VpnProduct', level: 'error', limit: 50 }))
    .filter((row) => row.context.service_uuid === uuid);
  assert.equal(logs.length, task.options.tries, 'one error log per attempt');
  for (const row of logs) assert.equal((row.response as { message: string }).message, 'Wireguard server not found');

  // once the server exists, retrying the failed task provisions the service
  await createServer(stack.panel, 'nosuch', '10.77.8.1/24');
  const retried = await api('POST', `/tasks/${task.id}/retry`);
  assert.equal(retried.status, 200, JSON.stringify(retried.body));
  assert.equal((await api('GET', `/services/${uuid}`)).body.provision_status, 'processing');
  const after = await waitForAction(stack, uuid, 'create');
  assert.equal(after.id, task.id);
  assert.equal(after.status, 'completed');
  const done = (await api('GET', `/services/${uuid}`)).body;
  assert.equal(done.provision_status, 'completed');
  assert.equal(done.status_reason, null);
  assert.equal(done.provision_data.wg_server, 'nosuch');
});

test('the access hash and account passwords never reach the platform database or its logs in clear', async () => {
  const { platform } = stack.platform;
  const dump = JSON.stringify([
    (await sql`SELECT * FROM vpn_product_panels`.execute(platform.store.db)).rows,
    await platform.store.db.selectFrom('services').selectAll().execute(),
    await platform.store.db.selectFrom('tasks').selectAll().execute(),
    await platform.store.db.selectFrom('module_logs').selectAll().execute(),
  ]);
  assert.equal(dump.includes(stack.panel.accessHash), false);
  assert.equal(dump.includes('Secr3tPassw0rd'), false);
  assert.ok(generatedPassword.length >= 8);
  assert.equal(dump.includes(generatedPassword), false);
  const logs = logLines.join('');
  assert.ok(logs.includes('"module_name":"VpnProduct"'), 'module log lines were captured');
  for (const secret of [stack.panel.accessHash, 'Secr3tPassw0rd', generatedPassword, stack.token]) assert.equal(logs.includes(secret), false, 'no secret in the logs');
});

test('the product and service pages render from views/modules/Product/VpnProduct without the password', async () => {
  const product = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'premium', bandwidth: 75 } });
  const created = await api('POST', '/services', { product_uuid: product.body.uuid, service_data: { username: 'gina', password: 'Pag3Secret99', notes: '<b>vip</b>' } });
  const module = (await stack.platform.platform.productForService(created.body.uuid));
  const productPage = module.getProductPage();
  assert.match(productPage, /<dd>ams<\/dd>/);
  assert.match(productPage, /75 Mbit\/s/);
  assert.match(productPage, /first server of the panel/);
  const servicePage = module.getServicePage();
  assert.match(servicePage, /<dd>gina<\/dd>/);
  assert.match(servicePage, /<dd>vip<\/dd>/, 'tags stripped from notes on save');
  assert.equal(servicePage.includes('Pag3Secret99'), false);
});
