// `npm start` (vpnhost demo): panel + platform come up wired together, survive a restart on the same data.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const root = new URL('../..', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'vpnhost-demo-'));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

interface Banner { panelUrl: string; hash: string; platformUrl: string; token: string; product: string }

/** Starts the demo on free ports and resolves with what its banner printed. */
function startDemo(): Promise<{ child: ChildProcess; banner: Banner; output: string }> {
  const child = spawn(process.execPath, ['bin/vpnhost.js', 'demo', '--data', dataDir, '--panel-listen', '127.0.0.1:0', '--platform-listen', '127.0.0.1:0'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start: ${out}`)), 30_000);
    child.on('exit', (code) => reject(new Error(`demo exited with ${code}: ${out}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes('Stop with Ctrl-C.')) return;
      clearTimeout(timer);
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
  const status = await panelGet(b, '/system/status');
  assert.equal(status.status, 'success');
  assert.equal(status.msg.count_wireguard, 1);
  assert.match(first.output, /renewal invoice INV-\d{4}-\d{6} \(\S+ to \S+\) charged to the saved card \(visa •••• 4242\): paid/, 'the demo shows a renewing plan');
  const { panels } = await platformGet(b, '/panels');
  assert.deepEqual(panels.map((p: { location: string }) => p.location), ['local']);

  const created = await fetch(`${b.platformUrl}/api/admin/services`, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ product_uuid: b.product, service_data: { username: 'demo_user' } }),
  }).then((r) => r.json());
  const action = await fetch(`${b.platformUrl}/api/admin/services/${created.uuid}/create`, { method: 'POST', headers: { authorization: `Bearer ${b.token}` } }).then((r) => r.json());
  assert.equal(action.status, 'success');
  let service: any;
  for (let i = 0; i < 100; i++) {
    service = await platformGet(b, `/services/${created.uuid}`);
    if (service.provision_status !== 'processing') break;
    await new Promise((r) => setTimeout(r, 100));
  }
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
  assert.equal((await panelGet(b2, '/system/status')).msg.count_wireguard, 1, 'the first server is created once');
  assert.equal((await panelGet(b2, '/system/status')).msg.count_accounts, 3, "the demo customer's two services (made once) and this test's");
  assert.match(second.output, /renewing plan: service \S+ \(5\.00 EUR monthly\), billing active, paid through \d{4}-\d{2}-\d{2}\n\s+renewal invoice INV-\d{4}-\d{6} \(\S+ to \S+\) charged to the saved card \(visa •••• 4242\): paid/,
    'the renewing plan, renewed and charged on the first start, is shown again');
  assert.equal((await platformGet(b2, '/panels')).panels.length, 1);
  assert.equal(await stop(second.child, 'SIGINT'), 0, 'Ctrl-C stops the demo cleanly');
});
