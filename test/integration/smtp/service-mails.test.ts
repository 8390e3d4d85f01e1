// End to end: a customer's service on a real panel process (simulated data plane) provisioned by the platform; the
// lifecycle's hooks queue the messages, and a real SMTP server (STARTTLS + AUTH) receives "how to connect" (with the
// panel's one-time link when it offers them), suspended, unsuspended and terminated — each send recorded.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import { vpnProductServices } from '../../../module/modules/Product/VpnProduct/index.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { panel } from '../../fixtures/platform/http.ts';
import { startPanel, removeDir, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { createServer } from '../../fixtures/platform/setup.ts';
import { openSmtpPlatform, startSmtpServer, type TestSmtpServer } from './smtp-fixture.ts';

let server: TestSmtpServer;
let panelProcess: PanelProcess;
let env: Awaited<ReturnType<typeof openSmtpPlatform>>;
const SERVICE_PASSWORD = 'Svc-Passw0rd-7781';

before(async () => {
  server = await startSmtpServer();
  panelProcess = await startPanel();
  await createServer(panelProcess, 'main', '10.77.0.1/22');
  env = await openSmtpPlatform();
  await vpnProductServices(env.platform.modules).panelStore!.upsert({ location: 'ams', api_url: panelProcess.url, access_hash: panelProcess.accessHash });
  await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Customer mail', {
    host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: server.password, sender: 'VPN Host <noreply@vpn.example>', ca: server.cert,
  });
});

after(async () => {
  await env?.close();
  await panelProcess?.stop();
  if (panelProcess) removeDir(panelProcess.dataDir);
  await server?.close();
});

async function settle(uuid: string, status: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await env.platform.ops.describeService(uuid)).provision_status === status) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`service ${uuid} never reached ${status}`);
}

test('a customer is mailed how to connect when the service completes, then on suspend, unsuspend and terminate', async () => {
  const { platform } = env;
  const customer = await new CustomerQueries(platform.store).create({ email: 'carol@customer.example', name: 'Carol Example' });
  const product = await platform.ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'premium', bandwidth: 50 });
  const service = await platform.ops.createService(product.uuid, { username: 'carol_vpn', password: SERVICE_PASSWORD });
  assert.ok(await new CustomerQueries(platform.store).assignService(service.uuid, customer.uuid));

  await platform.ops.runAction(service.uuid, 'create', {});
  await settle(service.uuid, 'completed');
  const [mail] = await server.waitForMails(1, 20_000);
  const accountName = String((await platform.ops.describeService(service.uuid)).provision_data.account_name);

  assert.equal(mail.subject, 'Your vpnhost VPN is ready: how to connect');
  assert.deepEqual(server.envelopes[0], ['carol@customer.example']);
  assert.equal((mail.from as any).value[0].address, 'noreply@vpn.example');
  const text = String(mail.text);
  const html = String(mail.html);
  assert.match(text, /^Hello Carol Example,/);
  assert.match(text, /Location: ams/);
  assert.match(text, /Plan: premium/);
  assert.match(text, /Username: carol_vpn/);
  assert.match(html, /<li>Install the WireGuard app/);

  // Does this panel offer one-time links? Ask it for one now: a link answer means the mail must carry one too.
  const probe = await panel<string>(panelProcess.url, panelProcess.accessHash, 'GET', `/account/${accountName}/otl`);
  const linkPattern = new RegExp(`${panelProcess.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/otl/[A-Za-z0-9_-]+`);
  if (probe.error === '' && typeof probe.msg === 'string') {
    const link = linkPattern.exec(text)?.[0];
    assert.ok(link, `the mail carries the panel's one-time link:\n${text}`);
    assert.notEqual(link, probe.msg, 'a link of its own, not one shared with anyone else');
    assert.ok(html.includes(`href="${link}"`));
  } else {
    assert.doesNotMatch(text, /\/otl\//);
    assert.match(text, /Download your WireGuard configuration \(file and QR code\) from your client area/);
    const note = (await platform.moduleLogStore.read({ name: 'Smtp', level: 'debug' })).find((r) => r.action === 'message' && /no one-time link/.test(String(r.response)));
    assert.ok(note, 'the module log says why the mail has no link');
  }
  for (const secret of [SERVICE_PASSWORD, 'PrivateKey', 'PRIVATE KEY', panelProcess.accessHash]) {
    assert.equal(text.includes(secret) || html.includes(secret), false, `${secret} is not in the mail`);
  }

  await platform.ops.runAction(service.uuid, 'suspend', {});
  await settle(service.uuid, 'suspended');
  await server.waitForMails(2, 20_000);
  await platform.ops.runAction(service.uuid, 'unsuspend', {});
  await server.waitForMails(3, 20_000);
  await platform.ops.runAction(service.uuid, 'termination', {});
  await settle(service.uuid, 'terminated');
  await server.waitForMails(4, 20_000);
  assert.deepEqual(server.received.map((m) => m.subject), [
    'Your vpnhost VPN is ready: how to connect',
    'Your vpnhost VPN has been suspended',
    'Your vpnhost VPN is active again',
    'Your vpnhost VPN has been terminated',
  ]);
  assert.match(String(server.received[1].text), /Your VPN connection does not work while the service is suspended\./);

  const store = smtpServices(platform.modules).smtpSends!;
  for (let i = 0; i < 200 && (await store.list({ service_uuid: service.uuid })).some((s) => s.status === 'queued'); i++) await new Promise((r) => setTimeout(r, 25));
  const sends = (await store.list({ service_uuid: service.uuid })).reverse();
  assert.deepEqual(sends.map((s) => [s.event, s.status, s.recipient, s.customer_uuid]), [
    ['service.provisioned', 'sent', 'carol@customer.example', customer.uuid],
    ['service.suspended', 'sent', 'carol@customer.example', customer.uuid],
    ['service.unsuspended', 'sent', 'carol@customer.example', customer.uuid],
    ['service.terminated', 'sent', 'carol@customer.example', customer.uuid],
  ]);
});

test('a service without a customer sends nothing and says so in the module log', async () => {
  const { platform } = env;
  const before = server.received.length;
  const product = await platform.ops.createProduct('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10 });
  const service = await platform.ops.createService(product.uuid, { username: 'nobody_vpn', password: SERVICE_PASSWORD });
  await platform.ops.runAction(service.uuid, 'create', {});
  await settle(service.uuid, 'completed');
  let entry;
  for (let i = 0; i < 200 && !entry; i++) {
    entry = (await platform.moduleLogStore.read({ name: 'Smtp', level: 'debug' })).find((r) => r.action === 'message' && (r.request as any)?.service_uuid === service.uuid);
    if (!entry) await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(String(entry?.response), /not sent: no customer for service/);
  assert.equal(server.received.length, before);
  assert.deepEqual((await smtpServices(platform.modules).smtpSends!.list({ service_uuid: service.uuid })), []);
});
