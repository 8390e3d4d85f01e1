// Sessions end when they should (server-side records): a cookie copied before logout, a password change or reset, a
// role change or the admin's deletion opens nothing afterwards; an admin cannot change their own role, grant what
// they do not hold or manage a more powerful admin; two Authorization headers are refused on the admin pages.
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { openQueryStore } from '../../../module/platform/store/query/query-store.ts';
import { SessionStore } from '../../../module/platform/services/sessions.ts';
import { ADMIN_COOKIE, CUSTOMER_COOKIE } from '../../../module/platform/web/web-deps.ts';
import { ADMIN_BEYOND_REFUSED, GRANT_REFUSED, OWN_ACCOUNT_REFUSED, OWN_ROLE_REFUSED } from '../../../module/platform/web/admin/roles-page.ts';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
let service: string;
const ROOT = { email: 'root@sessions.example', password: 'Root-Pass-1' };
const OPS = { email: 'ops@sessions.example', password: 'Ops-Pass-12' };
const CAROL = { email: 'carol@sessions.example', password: 'Carol-Pass-1' };
let opsRole: number;

before(async () => {
  stack = await startWebStack();
  await stack.web.admins.create({ ...ROOT, role: 'Administrator' });
  // Ops may manage admins and see the dashboard, nothing else.
  opsRole = (await stack.web.roles.create('Ops', ['Platform-Core-admins', 'Platform-Core-dashboard'])).id;
  await stack.web.admins.create({ ...OPS, role: opsRole });
  const product = await stack.platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'basic', disk_space: 10, bandwidth: 100 });
  const carol = await stack.web.customers.create(CAROL);
  service = (await stack.platform.serviceAdmin.createService(product.uuid, { domain: 'carol.example.com', username: 'carol_vpn' })).uuid;
  await stack.web.customers.queries.assignService(service, carol.uuid);
});

after(async () => {
  await stack?.close();
});

/** A logged-in admin browser and a second browser holding a copy of its session cookie (taken before anything ends). */
async function adminWithCopy(who: { email: string; password: string }): Promise<{ owner: Browser; thief: Browser }> {
  const owner = new Browser(stack.app);
  assert.equal((await owner.loginAdmin(who.email, who.password)).statusCode, 303);
  const thief = new Browser(stack.app);
  thief.jar.set(ADMIN_COOKIE, owner.jar.get(ADMIN_COOKIE)!);
  assert.equal((await thief.get('/admin')).statusCode, 200, 'the copy works while the session lives');
  return { owner, thief };
}

async function customerWithCopy(): Promise<{ owner: Browser; thief: Browser }> {
  const owner = new Browser(stack.app);
  assert.equal((await owner.loginCustomer(CAROL.email, CAROL.password)).statusCode, 303);
  const thief = new Browser(stack.app);
  thief.jar.set(CUSTOMER_COOKIE, owner.jar.get(CUSTOMER_COOKIE)!);
  assert.equal((await thief.get(`/client/services/${service}/ajax/connect/download`)).statusCode, 200, 'the copy downloads the config while the session lives');
  return { owner, thief };
}

/** One raw HTTP/1.1 request (repeated headers reach the server as sent, unlike inject); answers the status code. */
function rawStatus(port: number, path: string, headers: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: platform\r\nAccept: application/json\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

function downloadStatus(b: Browser): Promise<number> {
  return b.json('GET', `/client/services/${service}/ajax/connect/download`).then((r) => r.statusCode);
}

describe('a copied session cookie is refused once the session ended', () => {
  test('admin logout ends the session for every copy of its cookie; other sessions of the admin live on', async () => {
    const other = new Browser(stack.app);
    await other.loginAdmin(ROOT.email, ROOT.password);
    const { owner, thief } = await adminWithCopy(ROOT);
    await owner.get('/admin');
    assert.equal((await owner.post('/admin/logout')).statusCode, 303);
    const after = await thief.get('/admin');
    assert.equal(after.statusCode, 303);
    assert.match(String(after.headers.location), /^\/admin\/login/);
    assert.equal((await thief.json('GET', '/admin/modules/Plugin/WebPlugin/api/stats')).statusCode, 401);
    assert.equal((await other.get('/admin')).statusCode, 200, 'logout ends this session only');
  });

  test('customer logout: the copied cookie no longer downloads the configuration', async () => {
    const { owner, thief } = await customerWithCopy();
    await owner.get('/client');
    assert.equal((await owner.post('/client/logout')).statusCode, 303);
    assert.equal(await downloadStatus(thief), 401);
    assert.equal((await thief.get('/client')).statusCode, 303);
  });

  test('a customer password reset ends every session of the customer', async () => {
    const { thief } = await customerWithCopy();
    const made = (await stack.web.customers.resetToken(CAROL.email))!;
    const b = new Browser(stack.app);
    await b.get(`/client/password/reset?token=${encodeURIComponent(made.token)}`);
    assert.equal((await b.post('/client/password/reset', { token: made.token, password: CAROL.password })).statusCode, 303);
    assert.equal(await downloadStatus(thief), 401);
  });

  test('an admin password change ends every session of that admin', async () => {
    const { owner, thief } = await adminWithCopy(OPS);
    await stack.web.admins.setPassword((await stack.web.admins.findByEmail(OPS.email))!.id, OPS.password);
    assert.equal((await thief.get('/admin')).statusCode, 303);
    assert.equal((await owner.get('/admin')).statusCode, 303);
  });

  test('a role change made by another admin ends the sessions of the admin moved', async () => {
    const { thief } = await adminWithCopy(OPS);
    const root = new Browser(stack.app);
    await root.loginAdmin(ROOT.email, ROOT.password);
    await root.get('/admin/roles');
    const ops = (await stack.web.admins.findByEmail(OPS.email))!;
    const res = await root.post(`/admin/admins/${ops.id}/role`, { role_id: String(opsRole) });
    assert.equal(res.statusCode, 303);
    assert.equal((await thief.get('/admin')).statusCode, 303);
    assert.equal((await root.get('/admin')).statusCode, 200, "the acting admin's session is untouched");
  });

  test('deleting an admin ends their sessions; the sessions live in the database, seen by every process', async () => {
    const temp = { email: 'temp@sessions.example', password: 'Temp-Pass-1' };
    const made = await stack.web.admins.create({ ...temp, role: opsRole });
    const { thief } = await adminWithCopy(temp);
    const other = await openQueryStore({ engine: 'sqlite', dataDir: stack.dataDir });
    try {
      // Another process on the same database sees the session, and its end.
      assert.equal(await new SessionStore(other, stack.clock).read(thief.jar.get(ADMIN_COOKIE), 'admin'), String(made.id));
      const root = new Browser(stack.app);
      await root.loginAdmin(ROOT.email, ROOT.password);
      await root.get('/admin/roles');
      assert.equal((await root.post(`/admin/admins/${made.id}/delete`)).statusCode, 303);
      assert.equal((await stack.web.admins.get(made.id)), null);
      assert.equal(await new SessionStore(other, stack.clock).read(thief.jar.get(ADMIN_COOKIE), 'admin'), null);
    } finally {
      await other.close();
    }
    assert.equal((await thief.get('/admin')).statusCode, 303);
  });
});

describe('admin edges', () => {
  test('two Authorization headers are refused on /admin/* (pages, module API, login page) and /client/*, as on /api/admin', async () => {
    const token = (await stack.platform.tokens.create('sessions test')).token;
    await stack.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (stack.app.server.address() as AddressInfo).port;
    const api = '/admin/modules/Plugin/WebPlugin/api/stats';
    assert.equal(await rawStatus(port, api, [`Authorization: Bearer ${token}`]), 200, 'one header works');
    for (const url of [api, '/admin', '/admin/roles', '/admin/login', '/client', '/client/login', '/api/admin/products']) {
      assert.equal(await rawStatus(port, url, [`Authorization: Bearer ${token}`, 'Authorization: Bearer other-token']), 401, `${url}: valid first`);
      assert.equal(await rawStatus(port, url, ['Authorization: Bearer other-token', `Authorization: Bearer ${token}`]), 401, `${url}: valid last`);
      assert.equal(await rawStatus(port, url, [`authorization: Bearer ${token}`, `AUTHORIZATION: Bearer ${token}`]), 401, `${url}: the same twice`);
    }
    const folded = await stack.app.inject({ method: 'GET', url: api, headers: { authorization: `Bearer ${token}, Bearer ${token}` } });
    assert.equal(folded.statusCode, 401, 'two tokens folded into one header');
  });

  test('an admin cannot change their own role, even to one they may grant', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    await b.get('/admin/roles');
    const root = (await stack.web.admins.findByEmail(ROOT.email))!;
    const res = await b.post(`/admin/admins/${root.id}/role`, { role_id: String(opsRole) });
    assert.equal(res.statusCode, 403);
    assert.ok(res.body.includes(OWN_ROLE_REFUSED.replace(/'/g, '&#x27;')), res.body);
    assert.equal((await stack.web.admins.get(root.id))!.role_id, root.role_id);
    const selfDelete = await b.post(`/admin/admins/${root.id}/delete`, {}, { headers: { accept: 'application/json' } });
    assert.deepEqual([selfDelete.statusCode, JSON.parse(selfDelete.body).error], [403, OWN_ACCOUNT_REFUSED]);
    assert.ok((await stack.web.admins.get(root.id)));
  });

  test('self-promotion is refused: a limited admin grants only keys their role holds, and manages no stronger admin', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(OPS.email, OPS.password);
    await b.get('/admin/roles');
    const ops = (await stack.web.admins.findByEmail(OPS.email))!;
    const root = (await stack.web.admins.findByEmail(ROOT.email))!;
    const administrator = (await stack.web.roles.findByName('Administrator'))!;
    const json = { accept: 'application/json' };

    const self = await b.post(`/admin/admins/${ops.id}/role`, { role_id: String(administrator.id) }, { headers: json });
    assert.deepEqual([self.statusCode, JSON.parse(self.body).error], [403, OWN_ROLE_REFUSED]);
    const everything = await b.post(`/admin/roles/${opsRole}`, { all: '1' }, { headers: json });
    assert.deepEqual([everything.statusCode, JSON.parse(everything.body).error], [403, GRANT_REFUSED]);
    const extraKey = await b.post(`/admin/roles/${opsRole}`, { permissions: ['Platform-Core-admins', 'Platform-Core-dashboard', 'Platform-Core-modules'] }, { headers: json });
    assert.deepEqual([extraKey.statusCode, JSON.parse(extraKey.body).error], [403, GRANT_REFUSED]);
    const newRole = await b.post('/admin/roles', { name: 'Sneaky', all: '1' }, { headers: json });
    assert.deepEqual([newRole.statusCode, JSON.parse(newRole.body).error], [403, GRANT_REFUSED]);
    const sidekick = await b.post('/admin/admins', { email: 'sidekick@sessions.example', password: 'Sidekick-1', role_id: String(administrator.id) }, { headers: json });
    assert.deepEqual([sidekick.statusCode, JSON.parse(sidekick.body).error], [403, GRANT_REFUSED]);
    const demote = await b.post(`/admin/admins/${root.id}/role`, { role_id: String(opsRole) }, { headers: json });
    assert.deepEqual([demote.statusCode, JSON.parse(demote.body).error], [403, ADMIN_BEYOND_REFUSED]);
    const remove = await b.post(`/admin/admins/${root.id}/delete`, {}, { headers: json });
    assert.deepEqual([remove.statusCode, JSON.parse(remove.body).error], [403, ADMIN_BEYOND_REFUSED]);

    assert.equal((await stack.web.admins.get(ops.id))!.role_id, opsRole);
    assert.deepEqual((await stack.web.roles.get(opsRole))!.permissions, ['Platform-Core-admins', 'Platform-Core-dashboard']);
    assert.equal((await stack.web.roles.findByName('Sneaky')), null);
    assert.equal((await stack.web.admins.findByEmail('sidekick@sessions.example')), null);
    assert.equal((await stack.web.admins.get(root.id))!.role_id, administrator.id);
    // Within their own keys they may act: a role with a subset, and an admin holding it.
    const helper = await b.post('/admin/roles', { name: 'Dashboard only', permissions: 'Platform-Core-dashboard' }, { headers: json });
    assert.equal(helper.statusCode, 303);
    const made = await b.post('/admin/admins', { email: 'viewer@sessions.example', password: 'Viewer-Pass-1', role_id: String((await stack.web.roles.findByName('Dashboard only'))!.id) }, { headers: json });
    assert.equal(made.statusCode, 303);
  });
});
