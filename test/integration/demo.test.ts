// `npm start` (vpnhost demo): panel + platform come up wired together and survive a restart on the same data without
// making their sample data again (services, invoices, mails); a port already taken is reported before anything starts,
// with the flags that change it. Every wait is on the demo's own output or state, never on a clock.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { until } from '../fixtures/platform/http.ts';

const root = new URL('../..', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'vpnhost-demo-'));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

interface Banner { panelUrl: string; hash: string; platformUrl: string; token: string; product: string }

/** Starts the demo on free ports and resolves with what its banner printed (rejects when it exits first). */
function startDemo(): Promise<{ child: ChildProcess; banner: Banner; output: string }> {
  const child = spawn(process.execPath, ['bin/vpnhost.js', 'demo', '--data', dataDir, '--panel-listen', '127.0.0.1:0', '--platform-listen', '127.0.0.1:0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => void (err = (err + chunk.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`demo exited with ${code}: ${out}\n${err}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('Stop with Ctrl-C.')) return;
      const pick = (re: RegExp) => re.exec(out)?.[1] ?? '';
      resolve({
        child,
        output: out,
        banner: {
          panelUrl: pick(/^Panel \(simulated data plane\)\s+(\S+)\/api\/v1\//m),
          hash: pick(/access hash for 127\.0\.0\.1:\s+([0-9a-f]{80})/),
          platformUrl: pick(/^Platform \(embedded task queue\)\s+(\S+)\/api\/admin\//m),
          token: pick(/admin token:\s+(\S+)/),
          product: pick(/sample product \(VpnProduct\):\s+(\S+)/),
        },
      });
    });
  });
}

/** What the demo seeded: services, invoices and recorded mails (their uuids and events). */
async function seeded(b: Banner): Promise<{ services: string[]; invoices: string[]; mails: string[] }> {
  const services = (await platformGet(b, '/services?per_page=100')).services.map((s: { uuid: string }) => s.uuid).sort();
  const invoices = (await platformGet(b, '/invoices?per_page=100')).invoices.map((i: { number: string; status: string }) => `${i.number}:${i.status}`).sort();
  const mails = (await platformGet(b, '/smtp/sends?limit=100')).sends.map((m: { uuid: string; event: string }) => `${m.event}:${m.uuid}`).sort();
  return { services, invoices, mails };
}

/** The demo's plans as the API lists them: uuid, name, position, cap and prices (one line each, by position). */
async function plans(b: Banner): Promise<string[]> {
  const { products } = await platformGet(b, '/products');
  const { prices } = await platformGet(b, '/prices');
  return products.map((p: any) => {
    const own = prices.filter((x: any) => x.product_uuid === p.uuid).map((x: any) => `${x.amount} ${x.currency} ${x.billing_cycle}`).sort().join(', ');
    const d = p.product_data;
    return `${p.uuid} ${p.position} ${p.name} [${p.visible ? 'visible' : 'hidden'}] ${d.plan_type} ${d.bandwidth} Mbit/s ${d.data_cap_gb} GB then ${d.cap_action} ${d.cap_throttle_mbit} Mbit/s: ${own}`;
  });
}

/** Stops the demo with `signal` (SIGINT is what Ctrl-C sends) and resolves with its exit code. */
async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  child.removeAllListeners('exit');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

async function panelGet(b: Banner, path: string): Promise<any> {
  const res = await fetch(`${b.panelUrl}/api/v1${path}`, { headers: { cookie: `access_hash=${b.hash}` } });
  return res.json();
}

async function platformGet(b: Banner, path: string): Promise<any> {
  const res = await fetch(`${b.platformUrl}/api/admin${path}`, { headers: { authorization: `Bearer ${b.token}` } });
  assert.equal(res.status, 200);
  return res.json();
}

test('demo starts panel and platform, provisions a service, and restarts on the same data without duplicating', async () => {
  const first = await startDemo();
  const b = first.banner;
  // The demo order's invoice is paid (its service is then provisioned): a restart must not order again either way.
  const invoice = (await platformGet(b, '/invoices?status=unpaid')).invoices[0];
  const paid = await fetch(`${b.platformUrl}/api/admin/invoices/${invoice.uuid}/payments`, {
    method: 'POST', headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' }, body: '{}',
  });
  assert.equal(paid.status, 200);
  // Settled: the demo customer's mails — two invoices made (the demo order, the renewing plan's order), three paid
  // (those two and the renewal), one renewal invoice, three services ready (the demo service, the paid order's, the
  // renewing plan's).
  const before = await until(async () => {
    const now = await seeded(b);
    return now.mails.length >= 9 ? now : undefined;
  }, 60_000);
  assert.equal(before.mails.length, 9, before.mails.join(' '));
  const status = await panelGet(b, '/system/status');
  assert.equal(status.status, 'success');
  assert.equal(status.msg.count_wireguard, 1);
  assert.match(first.output, /renewal invoice INV-\d{4}-\d{6} \(\S+ to \S+\) charged to the saved card \(visa •••• 4242\): paid/, 'the demo shows a renewing plan');
  // Named, described, priced and capped plans; the sample product is the first.
  const planLines = await plans(b);
  assert.deepEqual(planLines.map((line) => line.replace(/^\S+ /, '')), [
    '1 VPN Basic [visible] basic 100 Mbit/s 50 GB then throttle 5 Mbit/s: 5.00 EUR monthly, 50.00 EUR annually',
    '2 VPN Premium [visible] premium 300 Mbit/s 500 GB then throttle 20 Mbit/s: 9.00 EUR monthly, 90.00 EUR annually',
  ]);
  assert.ok(planLines[0].startsWith(`${b.product} `), 'the sample product is VPN Basic');
  assert.ok((await platformGet(b, '/products')).products.every((p: any) => p.description.includes('GB a month')), 'each plan says its allowance');
  assert.match(first.output, /plans:\s+VPN Basic \(5\.00 EUR monthly, 50 GB a month\), VPN Premium \(9\.00 EUR monthly, 500 GB a month\)/);
  const { panels } = await platformGet(b, '/panels');
  assert.deepEqual(panels.map((p: { location: string }) => p.location), ['local']);

  const created = await fetch(`${b.platformUrl}/api/admin/services`, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ product_uuid: b.product, service_data: { username: 'demo_user' } }),
  }).then((r) => r.json());
  const action = await fetch(`${b.platformUrl}/api/admin/services/${created.uuid}/create`, { method: 'POST', headers: { authorization: `Bearer ${b.token}` } }).then((r) => r.json());
  assert.equal(action.status, 'success');
  const service = await until(async () => {
    const now = await platformGet(b, `/services/${created.uuid}`);
    return now.provision_status === 'processing' || now.provision_status === 'pending' ? undefined : now;
  }, 60_000);
  assert.equal(service.provision_status, 'completed');
  const account = await panelGet(b, `/account/${service.provision_data.account_name}`);
  assert.equal(account.msg.username, 'demo_user');
  // The web logins printed in the banner work: the admin login page answers a session cookie.
  const adminLogin = /admin:\s+\S+\s+(\S+) \/ (\S+)/.exec(first.output)!;
  const loginPage = await fetch(`${b.platformUrl}/admin/login`);
  const csrfCookie = (loginPage.headers.get('set-cookie') ?? '').split(';')[0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await loginPage.text())![1];
  const login = await fetch(`${b.platformUrl}/admin/login`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ _csrf: csrf, email: adminLogin[1], password: adminLogin[2] }).toString(),
  });
  assert.equal(login.status, 303);
  assert.match(login.headers.get('set-cookie') ?? '', /vh_admin=/);
  assert.equal(await stop(first.child, 'SIGTERM'), 0);

  const second = await startDemo();
  const b2 = second.banner;
  assert.notEqual(b2.hash, b.hash, 'a fresh access hash is printed on every start');
  const stale = await panelGet({ ...b2, hash: b.hash }, '/system/status');
  assert.equal(stale.error, 'Not authorized', 'the hash printed by the earlier start is replaced, not piled up');
  const staleToken = await fetch(`${b2.platformUrl}/api/admin/panels`, { headers: { authorization: `Bearer ${b.token}` } });
  assert.equal(staleToken.status, 401, 'so is the admin token');
  assert.equal(b2.product, b.product, 'the sample product is created once');
  assert.deepEqual(await plans(b2), planLines, 'the plans are made once: same products, prices and caps');
  assert.equal((await panelGet(b2, '/system/status')).msg.count_wireguard, 1, 'the first server is created once');
  assert.equal((await panelGet(b2, '/system/status')).msg.count_accounts, 4, "the demo customer's service, the paid demo order's, the renewing plan's (each made once) and this test's");
  assert.match(second.output, /renewing plan: service \S+ \(5\.00 EUR monthly\), billing active, paid through \d{4}-\d{2}-\d{2}\n\s+renewal invoice INV-\d{4}-\d{6} \(\S+ to \S+\) charged to the saved card \(visa •••• 4242\): paid/,
    'the renewing plan, renewed and charged on the first start, is shown again');
  assert.equal((await platformGet(b2, '/panels')).panels.length, 1);
  const again = await seeded(b2);
  assert.deepEqual(again.invoices, before.invoices, 'no second demo order: the same invoices');
  assert.deepEqual(again.services, [...before.services, created.uuid].sort(), "the demo's services and this test's, nothing more");
  assert.deepEqual(again.mails, before.mails, 'no new mail: the invoice and "VPN is ready" mails are not made again');
  assert.match(second.output, new RegExp(`invoice ${invoice.number} \\(5\\.00 EUR, paid\\)`), 'the banner shows the same invoice, paid');
  assert.equal(await stop(second.child, 'SIGINT'), 0, 'Ctrl-C stops the demo cleanly');
});

test('a port already taken is reported before anything starts, with the flags that change it', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
  const taken = (holder.address() as AddressInfo).port;
  const fresh = join(dataDir, 'never-made');
  try {
    for (const [flag, args] of [
      ['--panel-listen', ['--panel-listen', `127.0.0.1:${taken}`, '--platform-listen', '127.0.0.1:0']],
      ['--platform-listen', ['--panel-listen', '127.0.0.1:0', '--platform-listen', `127.0.0.1:${taken}`]],
    ] as const) {
      const child = spawn(process.execPath, ['bin/vpnhost.js', 'demo', '--data', fresh, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => void (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      assert.equal(code, 1, err);
      assert.match(err, new RegExp(`^vpnhost demo: 127\\.0\\.0\\.1:${taken} \\(${flag}\\) is already in use \\(EADDRINUSE\\)`), err);
      assert.match(err, /\n {2}npm start -- --panel-listen \S+ --platform-listen \S+\n/, 'the npm start form');
      assert.match(err, /\n {2}vpnhost demo --panel-listen \S+ --platform-listen \S+\n/, 'the vpnhost form');
      assert.doesNotMatch(err, new RegExp(`${flag} 127\\.0\\.0\\.1:${taken}\\b`), 'the suggestion moves the taken port');
      assert.equal(existsSync(fresh), false, 'nothing was started: no data directory made');
    }
  } finally {
    holder.close();
  }
});
