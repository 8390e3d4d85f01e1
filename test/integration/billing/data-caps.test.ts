// Data caps on a driven clock: two capped plans sold on one panel (simulated driver, its traffic counters set by the
// test and sampled by its statistics), the cap pass reading the panel once per pass; the throttled plan crosses 80 %
// and 100 % (mailed twice in all through a real SMTP server, throttled once: the panel account's b_download/b_upload),
// a second pass changes nothing, the renewal lifts it; the suspending plan suspends and un-suspends likewise; a
// renewal paid late gives no new allowance while overdue and lifts the cap on its payment.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { UsageEvent } from '../../../hooks.ts';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import { vpnProductServices } from '../../../module/modules/Product/VpnProduct/index.ts';
import { GB } from '../../../module/modules/Product/VpnProduct/caps/cap-policy.ts';
import { provisionStatus, startClockStack, type ClockStack } from '../../fixtures/billing/clock-stack.ts';
import { until } from '../../fixtures/platform/http.ts';
import { makeStatsPanel, type StatsPanel } from '../statistics/statistics-fixture.ts';
import { startSmtpServer, type TestSmtpServer } from '../smtp/smtp-fixture.ts';

let stack: ClockStack;
let gw: StatsPanel;
let smtp: TestSmtpServer;
let iface = '';
const requests = { range: 0, perAccount: 0 };
const usageEvents: Array<{ name: string; payload: UsageEvent }> = [];

before(async () => {
  smtp = await startSmtpServer();
  stack = await startClockStack('2026-03-10', { panel: false });
  gw = await makeStatsPanel({ start: stack.clock.now().toISOString() });
  iface = (await gw.ok('POST', '/wireguard', { name: 'main' })).interface_name;
  const url = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  gw.app.server.on('request', (request) => {
    if (request.url?.startsWith('/api/v1/traffic_statistics')) requests.range += 1;
    else if (/\/traffic_statistics\//.test(request.url ?? '')) requests.perAccount += 1;
  });
  const { hash } = gw.app.services.accessHashes.create('127.0.0.1');
  const added = await stack.api('POST', '/panels', { location: 'ams', api_url: url, access_hash: hash });
  assert.equal(added.status, 201, JSON.stringify(added.body));
  await stack.platform.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Customer mail', {
    host: '127.0.0.1', port: smtp.port, encryption: 'starttls', username: smtp.user, password: smtp.password, sender: 'VPN Host <noreply@vpn.example>', ca: smtp.cert,
  });
  for (const name of ['service.usage_warning', 'service.usage_exceeded'] as const) {
    stack.platform.platform.hooks.on(name, (payload) => void usageEvents.push({ name, payload }));
  }
});

after(async () => {
  await stack?.close();
  await gw?.close();
  await smtp?.close();
});

async function cappedProduct(action: 'throttle' | 'suspend'): Promise<string> {
  const res = await stack.api('POST', '/products', {
    module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 50, data_cap_gb: 10, cap_action: action, cap_throttle_mbit: 2 },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal((await stack.api('PUT', `/products/${res.body.uuid}/prices/monthly`, { amount: '5.00', currency: 'EUR' })).status, 200);
  return res.body.uuid;
}

async function sell(productUuid: string, username: string): Promise<{ uuid: string; account: string; publicKey: string }> {
  const order = await stack.api('POST', '/orders', { customer: { email: `${username}@example.test`, name: username }, product_uuid: productUuid, billing_cycle: 'monthly', service_data: { username } });
  assert.equal(order.status, 201, JSON.stringify(order.body));
  assert.equal((await stack.api('POST', `/invoices/${order.body.invoice.uuid}/payments`, {})).status, 200);
  await provisionStatus(stack, order.body.service_uuid, 'completed');
  const account = (await stack.api('GET', `/services/${order.body.service_uuid}`)).body.provision_data.account_name;
  return { uuid: order.body.service_uuid, account, publicKey: (await gw.ok('GET', `/account/${account}`)).public_key };
}

/** The panel's clock follows the platform's; a sample at the platform's time counts the counters set since the last. */
async function traffic(peer: { publicKey: string }, gigabytes: number): Promise<void> {
  const totalBytes = Math.round(gigabytes * GB);
  gw.clock.set(stack.clock.now());
  gw.counters(iface, peer.publicKey, Math.floor(totalBytes / 10), totalBytes - Math.floor(totalBytes / 10));
  await gw.sample();
}

async function pass() {
  gw.clock.set(stack.clock.now());
  const summary = await vpnProductServices(stack.platform.platform.modules).caps!.run();
  assert.deepEqual(summary.failed_panels, []);
  assert.equal(summary.requests, summary.panels, 'one traffic request per panel');
  return summary;
}

async function tasks(uuid: string, tag: string): Promise<any[]> {
  return (await stack.api('GET', `/tasks?tag=service:${uuid}`)).body.tasks.filter((t: any) => t.tags.includes(tag));
}

async function settled(uuid: string, tag: string, count: number): Promise<void> {
  await until(async () => {
    const list = await tasks(uuid, tag);
    return list.length === count && list.every((t) => t.status === 'completed') ? true : undefined;
  }, 30_000, 25);
}

/** The service's account on the panel. */
async function account(uuid: string): Promise<{ status: string; b_download: string; b_upload: string }> {
  const name = (await stack.api('GET', `/services/${uuid}`)).body.provision_data.account_name;
  return gw.ok('GET', `/account/${name}`);
}

async function rate(uuid: string): Promise<string> {
  const { b_download, b_upload } = await account(uuid);
  return `${b_download}/${b_upload}`;
}

function usageMails(to: string) {
  return smtp.received.filter((m, i) => smtp.envelopes[i].includes(to) && /data allowance/.test(String(m.subject))).map((m) => String(m.subject));
}

test('throttle: 80 % and 100 % mailed once each, throttled once, a second pass changes nothing, lifted at renewal; suspend likewise', async () => {
  const throttled = await sell(await cappedProduct('throttle'), 'cap_throttle');
  const suspended = await sell(await cappedProduct('suspend'), 'cap_suspend');
  assert.equal(await rate(throttled.uuid), '50/50');
  const sends = smtpServices(stack.platform.platform.modules).smtpSends!;

  // 8.5 GB of 10: the warning, nothing else
  await stack.advanceTo('2026-03-20');
  await traffic(throttled, 8.5);
  await traffic(suspended, 8.2);
  await pass();
  await until(async () => (usageMails('cap_throttle@example.test').length === 1 && usageMails('cap_suspend@example.test').length === 1 ? true : undefined), 20_000, 25);
  assert.deepEqual(usageMails('cap_throttle@example.test'), ['Your vpnhost VPN has used 85% of its data allowance']);
  assert.match(String(smtp.received.find((m) => /85%/.test(String(m.subject)))!.text), /8\.5 GB of 10 GB/);
  assert.equal(await rate(throttled.uuid), '50/50');
  assert.equal((await tasks(throttled.uuid, 'cap_throttle')).length, 0);

  // 10.4 GB: the exceeded mail, the throttle (and the suspension), once
  await stack.advanceTo('2026-03-25');
  await traffic(throttled, 10.4);
  await traffic(suspended, 10.1);
  await pass();
  await settled(throttled.uuid, 'cap_throttle', 1);
  assert.equal(await rate(throttled.uuid), '2/2', 'the panel account is throttled to cap_throttle_mbit');
  await provisionStatus(stack, suspended.uuid, 'suspended');
  assert.equal((await account(suspended.uuid)).status, 'disable');
  const again = await pass();
  assert.equal(again.effects.length, 0, 'a second pass changes nothing');
  assert.equal(await rate(throttled.uuid), '2/2');
  assert.equal((await tasks(throttled.uuid, 'cap_throttle')).length, 1);
  assert.equal((await tasks(suspended.uuid, 'suspend')).length, 1);
  await until(async () => (usageMails('cap_throttle@example.test').length === 2 ? true : undefined), 20_000, 25);
  assert.deepEqual(usageMails('cap_throttle@example.test'), [
    'Your vpnhost VPN has used 85% of its data allowance', 'Your vpnhost VPN has used its whole data allowance',
  ]);
  const view = (await stack.api('GET', `/services/${throttled.uuid}`)).body;
  assert.equal(view.provision_status, 'completed', 'throttling is not a suspension');

  // The client area's Usage tab: used / allowance, the bar, days left.
  const product = (await stack.platform.platform.productForService(throttled.uuid)) as unknown as { variables_usage(): Promise<any>; view(t: string, d: object): string };
  const before = requests.perAccount;
  const usage = await product.variables_usage();
  const tabRequests = requests.perAccount - before;
  assert.deepEqual(
    [usage.cap.used, usage.cap.allowance, usage.cap.percent, usage.cap.days_left, usage.cap.period_end, usage.cap.applied],
    ['10.4 GB', '10 GB', 100, 16, '2026-04-10', 'throttle'],
  );
  const tab = product.view('client.usage', usage);
  assert.match(tab, /<strong>10.4 GB<\/strong> of <strong>10 GB<\/strong> used this period \(100%\), 16 days left \(renews <time datetime="2026-04-10">10 Apr 2026<\/time>\)/);
  // The daily table starts at the service's creation (2026-03-10: no February), in human units and the reader's locale.
  assert.deepEqual(usage.months.map((m: any) => m.label), ['2026-03']);
  assert.ok(usage.months[0].days.length > 0 && usage.months[0].days.every((d: any) => d.date >= '2026-03-10'), JSON.stringify(usage.months[0].days));
  const total = usage.months[0].total_download + usage.months[0].total_upload;
  assert.ok(Math.abs(total - 10.4 * GB) < 0.01 * GB, `the days add up to the 10.4 GB sent (${total})`);
  assert.deepEqual([usage.months[0].total_download_text, usage.months[0].total_upload_text], ['9.4 GB', '1 GB']);
  const german = product.view('client.usage', { ...usage, locale: 'de-DE' });
  assert.match(german, /<h2><time datetime="2026-03">März 2026<\/time><\/h2>/);
  assert.match(german, /\(renews <time datetime="2026-04-10">10\.04\.2026<\/time>\)/);
  assert.match(german, /<p>Total: 9\.4 GB downloaded, 1 GB uploaded\.<\/p>/);
  assert.match(german, /<td><time datetime="2026-03-\d\d">\d\d\.03\.2026<\/time><\/td><td data-bytes="\d+">[\d.]+ (B|kB|MB|GB)<\/td>/);
  assert.match(tab, /<progress class="usage-cap-bar" max="100" value="100"/);
  assert.match(tab, /the speed is limited to 2 Mbit\/s until the period renews/);

  // The renewal: paid early (no lift before the new period begins), lifted on the first pass of the new period.
  await stack.advanceTo('2026-04-05');
  for (const uuid of [throttled.uuid, suspended.uuid]) {
    const renewal = (await stack.api('GET', `/invoices?service=${uuid}`)).body.invoices.find((i: any) => i.kind === 'renewal');
    assert.equal((await stack.api('POST', `/invoices/${renewal.uuid}/payments`, {})).status, 200);
  }
  await pass();
  assert.equal((await tasks(throttled.uuid, 'cap_lift')).length, 0, 'the paid period has not begun yet: nothing queued');
  assert.equal(await rate(throttled.uuid), '2/2');
  await stack.advanceTo('2026-04-10');
  await pass();
  await settled(throttled.uuid, 'cap_lift', 1);
  assert.equal(await rate(throttled.uuid), '50/50', 'unthrottled at renewal');
  await provisionStatus(stack, suspended.uuid, 'completed');
  assert.equal((await account(suspended.uuid)).status, 'enable', 'un-suspended at renewal');
  assert.equal((await pass()).effects.length, 0);
  assert.equal((await tasks(suspended.uuid, 'unsuspend')).length, 1);

  // Usage mails: two per service in all, once each per period.
  const counted = usageEvents.filter((e) => e.payload.service_uuid === throttled.uuid).map((e) => e.name);
  assert.deepEqual(counted, ['service.usage_warning', 'service.usage_exceeded']);
  assert.deepEqual(usageEvents.filter((e) => e.payload.service_uuid === suspended.uuid).map((e) => e.name), ['service.usage_warning', 'service.usage_exceeded']);
  await until(async () => ((await sends.list({ service_uuid: throttled.uuid })).filter((s) => String(s.event).startsWith('service.usage_')).every((s) => s.status === 'sent') ? true : undefined), 20_000, 25);
  assert.equal((await sends.list({ service_uuid: throttled.uuid })).filter((s) => String(s.event).startsWith('service.usage_')).length, 2);
  assert.equal(requests.perAccount, tabRequests, 'the pass never asks per account (only the Usage tab reads its own months)');
  assert.ok(requests.range >= 5);

  // A renewal paid late: over the cap again in April, no new allowance while the May renewal is overdue, lifted on
  // its payment (service.renewed, the paid period has begun).
  await traffic(throttled, 10.4); // the panel's sample at the start of the period: nothing new
  await stack.advanceTo('2026-04-20');
  await traffic(throttled, 10.4 + 10.2);
  await pass();
  await settled(throttled.uuid, 'cap_throttle', 2);
  assert.equal(await rate(throttled.uuid), '2/2');
  await stack.advanceTo('2026-05-11');
  assert.equal((await stack.api('GET', `/services/${throttled.uuid}/billing`)).body.state, 'overdue');
  await pass();
  assert.equal((await tasks(throttled.uuid, 'cap_lift')).length, 1, 'overdue: the April period goes on, still throttled');
  const may = (await stack.api('GET', `/invoices?service=${throttled.uuid}`)).body.invoices.find((i: any) => i.kind === 'renewal' && i.status === 'unpaid');
  assert.equal(may.period_start, '2026-05-10');
  assert.equal((await stack.api('POST', `/invoices/${may.uuid}/payments`, {})).status, 200);
  await settled(throttled.uuid, 'cap_lift', 2);
  assert.equal(await rate(throttled.uuid), '50/50', 'lifted when the late renewal is paid');
  assert.deepEqual(usageEvents.filter((e) => e.payload.service_uuid === throttled.uuid).map((e) => [e.name, e.payload.period_start]), [
    ['service.usage_warning', '2026-03-10'], ['service.usage_exceeded', '2026-03-10'], ['service.usage_exceeded', '2026-04-10'],
  ], 'April jumped past 100 %: its exceeded mail only');
});
