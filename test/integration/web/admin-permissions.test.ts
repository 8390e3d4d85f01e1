// Web host, admin side (inject): login and the server-side session (expiry, forged and cross-side cookies), CSRF refusal, every
// module route answering 403 `Insufficient permissions` without its key (page or JSON by route kind), the sidebar
// filtered by permission with the spec's link resolution and active_links, roles edited through the page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_COOKIE } from '../../../module/platform/web/web-deps.ts';
import { WebPlugin } from '../../fixtures/web/web-modules.ts';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
const ROOT = { email: 'root@example.com', password: 'Root-Pass-1' };
const VIEWER = { email: 'viewer@example.com', password: 'Viewer-Pass-1' };
const NOBODY = { email: 'nobody@example.com', password: 'Nobody-Pass-1' };

before(async () => {
  stack = await startWebStack();
  await stack.web.admins.create({ ...ROOT, role: 'Administrator' });
  const viewer = (await stack.web.roles.create('Fleet viewer', ['Plugin-WebPlugin-view', 'Platform-Core-dashboard']));
  await stack.web.admins.create({ ...VIEWER, role: viewer.id });
  const none = (await stack.web.roles.create('No keys', []));
  await stack.web.admins.create({ ...NOBODY, role: none.id });
});

after(async () => {
  await stack?.close();
});

/** `<a href=... data-route=...>title</a>` links of the sidebar, with their active flag. */
function sidebarLinks(html: string): Array<{ href: string; title: string; active: boolean; route: string }> {
  const nav = /<nav class="sidebar"[\s\S]*?<\/nav>/.exec(html)?.[0] ?? '';
  return [...nav.matchAll(/<a href="([^"]+)"( class="active" aria-current="page")? data-route="([^"]*)">([^<]+)<\/a>/g)].map((m) => ({
    href: m[1], active: Boolean(m[2]), route: m[3], title: m[4],
  }));
}

describe('login and session', () => {
  test('a page without a session redirects to the login page; JSON clients get 401', async () => {
    const b = new Browser(stack.app);
    const page = await b.get('/admin/services');
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/admin/login?next=%2Fadmin%2Fservices');
    const json = await stack.app.inject({ method: 'GET', url: '/admin/modules/Plugin/WebPlugin/api/stats' });
    assert.equal(json.statusCode, 401);
  });

  test('wrong password answers 401 with the login page and no session cookie', async () => {
    const b = new Browser(stack.app);
    const res = await b.loginAdmin(ROOT.email, 'Wrong-Pass-1');
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /wrong e-mail address or password/);
    assert.equal(b.jar.has(ADMIN_COOKIE), false);
  });

  test('login follows a local next and refuses another origin', async () => {
    const b = new Browser(stack.app);
    await b.get('/admin/login');
    const res = await b.post('/admin/login', { ...ROOT, next: '//evil.example/x' });
    assert.equal(res.headers.location, '/admin');
    const cookie = res.cookies.find((c) => c.name === ADMIN_COOKIE)!;
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/admin');
  });

  test('the session expires after 30 idle minutes, stays alive while in use, and ends at 12 hours regardless', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    const cookie = b.jar.get(ADMIN_COOKIE);
    assert.match(String(cookie), /^[A-Za-z0-9_-]{43}$/, 'the cookie is a random session id, nothing readable');
    stack.clock.advance(6 * 60_000);
    assert.equal((await b.get('/admin')).statusCode, 200);
    // Keep it in use every 20 minutes up to the absolute limit.
    for (let i = 0; i < 35; i++) {
      stack.clock.advance(20 * 60_000);
      const res = await b.get('/admin');
      if ((i + 1) * 20 * 60_000 + 6 * 60_000 < 12 * 3_600_000) assert.equal(res.statusCode, 200, `in use at step ${i}`);
      else assert.equal(res.statusCode, 303, `over 12 h at step ${i}`);
    }
    const idle = new Browser(stack.app);
    await idle.loginAdmin(ROOT.email, ROOT.password);
    stack.clock.advance(31 * 60_000);
    const res = await idle.get('/admin');
    assert.equal(res.statusCode, 303);
    assert.match(String(res.headers.location), /^\/admin\/login/);
  });

  test('a forged cookie, or a customer session presented as an admin one, is refused', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    const value = b.jar.get(ADMIN_COOKIE)!;
    b.jar.set(ADMIN_COOKIE, `${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`);
    assert.equal((await b.get('/admin')).statusCode, 303);
    const admin = (await stack.web.admins.findByEmail(ROOT.email))!;
    b.jar.set(ADMIN_COOKIE, await stack.web.sessions.start('customer', String(admin.id)));
    assert.equal((await b.get('/admin')).statusCode, 303);
  });

  test('a password change ends the admin\'s sessions', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(NOBODY.email, NOBODY.password);
    assert.equal((await b.get('/admin/roles')).statusCode, 403);
    const id = (await stack.web.admins.findByEmail(NOBODY.email))!.id;
    await stack.web.admins.setPassword(id, NOBODY.password);
    assert.equal((await b.get('/admin/roles')).statusCode, 303);
  });
});

describe('CSRF', () => {
  test('a form post without the token, or with a wrong one, is refused with 403 and changes nothing', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    await b.get('/admin/roles');
    const missing = await b.post('/admin/roles', { name: 'Sneaky' }, { csrf: false });
    assert.equal(missing.statusCode, 403);
    assert.match(missing.body, /the form has expired or did not come from this site/);
    const wrong = await b.post('/admin/roles', { name: 'Sneaky', _csrf: 'forged-token' }, { csrf: false });
    assert.equal(wrong.statusCode, 403);
    assert.equal((await stack.web.roles.findByName('Sneaky')), null);
    const ok = await b.post('/admin/roles', { name: 'Proper' });
    assert.equal(ok.statusCode, 303);
    assert.ok((await stack.web.roles.findByName('Proper')));
  });

  test('the login form itself needs the token', async () => {
    const b = new Browser(stack.app);
    const res = await b.post('/admin/login', ROOT, { csrf: false });
    assert.equal(res.statusCode, 403);
  });

  test('a module web route posted without the token is refused before the controller runs', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    const res = await b.post('/admin/modules/Plugin/WebPlugin/settings', { a: '1' }, { csrf: false });
    assert.equal(res.statusCode, 403);
    const ok = await b.post('/admin/modules/Plugin/WebPlugin/settings', { a: '1' });
    assert.equal(ok.statusCode, 200);
    assert.equal(JSON.parse(ok.body).saved.a, '1');
  });
});

describe('module routes and hasPermission', () => {
  const plugin = new (class extends WebPlugin {})({} as never);
  const routes = [
    ...plugin.adminWebRoutes().map((r) => ({ ...r, kind: 'web' as const })),
    ...plugin.adminApiRoutes().map((r) => ({ ...r, kind: 'api' as const })),
  ];
  const url = (uri: string) => `/admin/modules/Plugin/WebPlugin/${uri.replace('{id}', '7')}`;

  test('every module route answers 403 `Insufficient permissions` to an admin without its key (page or JSON by kind)', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(NOBODY.email, NOBODY.password);
    await b.get('/admin/login');
    assert.ok(routes.length >= 7);
    for (const route of routes) {
      const method = route.method.toUpperCase();
      const res = method === 'GET'
        ? await b.get(url(route.uri), route.kind === 'api' ? { accept: 'application/json' } : {})
        : method === 'POST' ? await b.post(url(route.uri), {}) : await b.json(method as 'DELETE', url(route.uri));
      assert.equal(res.statusCode, 403, `${method} ${route.uri}`);
      if (route.kind === 'api') assert.deepEqual(JSON.parse(res.body), { error: 'Insufficient permissions' }, `${method} ${route.uri}`);
      else {
        assert.match(String(res.headers['content-type']), /text\/html/);
        assert.match(res.body, /<p class="error" role="alert">Insufficient permissions<\/p>/, `${method} ${route.uri}`);
      }
    }
  });

  test('with the key the same routes run their controllers; a key checked inside a controller answers 403 too', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(VIEWER.email, VIEWER.password);
    const overview = await b.get(url('overview'));
    assert.equal(overview.statusCode, 200);
    assert.match(overview.body, /id="fleet-overview"/);
    assert.match(overview.body, /<nav class="sidebar"/, 'web routes render inside the admin layout');
    assert.equal((await b.get(url('servers/{id}'))).statusCode, 200);
    assert.deepEqual(JSON.parse((await b.get(url('api/stats'), { accept: 'application/json' })).body), { servers: 3 });
    assert.equal((await b.get(url('settings'))).statusCode, 403, 'edit key missing');
    const vault = await b.get(url('vault'));
    assert.equal(vault.statusCode, 403);
    assert.match(vault.body, /Insufficient permissions/);
  });

  test('platform pages check their keys too', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(VIEWER.email, VIEWER.password);
    assert.equal((await b.get('/admin')).statusCode, 200);
    for (const page of ['/admin/products', '/admin/services', '/admin/customers', '/admin/panels', '/admin/modules', '/admin/tasks', '/admin/roles']) {
      const res = await b.get(page);
      assert.equal(res.statusCode, 403, page);
      assert.match(res.body, /Insufficient permissions/, page);
    }
  });

  test('an admin bearer token (API client) reaches module routes without CSRF', async () => {
    const token = (await stack.platform.tokens.create('web test')).token;
    const res = await stack.app.inject({ method: 'DELETE', url: url('api/servers/{id}'), headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { removed: '7' });
    const bad = await stack.app.inject({ method: 'GET', url: url('api/stats'), headers: { authorization: 'Bearer vpa_nope' } });
    assert.equal(bad.statusCode, 401);
  });
});

describe('sidebar', () => {
  test('link resolution: route name, then route uri, then the raw relative link; active_links highlight', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    const onServer = sidebarLinks((await b.get('/admin/modules/Plugin/WebPlugin/servers/3')).body).filter((l) => l.href.includes('WebPlugin'));
    assert.deepEqual(onServer, [
      { href: '/admin/modules/Plugin/WebPlugin/overview', title: 'Overview', route: 'web.overview', active: true },
      { href: '/admin/modules/Plugin/WebPlugin/settings', title: 'Settings', route: 'web.settings', active: false },
      { href: '/admin/modules/Plugin/WebPlugin/reports/monthly', title: 'Reports', route: '', active: false },
    ]);
    const onSettings = sidebarLinks((await b.get('/admin/modules/Plugin/WebPlugin/settings')).body).filter((l) => l.active);
    assert.deepEqual(onSettings.map((l) => l.title), ['Settings'], 'settings is active through its uri in active_links');
    assert.equal((await b.get('/admin/modules/Plugin/WebPlugin/reports/monthly')).statusCode, 404, 'the raw fallback leads to a missing page');
    const group = /<details class="group" open>\s*<summary>WebPlugin<\/summary>/.test((await b.get('/admin/modules/Plugin/WebPlugin/overview')).body);
    assert.ok(group, 'the module group is expanded when one of its items is active');
  });

  test('entries the admin lacks the key for are hidden; platform pages too', async () => {
    const viewer = new Browser(stack.app);
    await viewer.loginAdmin(VIEWER.email, VIEWER.password);
    const links = sidebarLinks((await viewer.get('/admin')).body);
    assert.deepEqual(links.map((l) => l.title), ['Dashboard', 'Overview', 'Reports']);
    const nobody = new Browser(stack.app);
    await nobody.loginAdmin(NOBODY.email, NOBODY.password);
    assert.deepEqual(sidebarLinks((await nobody.get('/admin/modules/Plugin/WebPlugin/overview')).body), []);
  });
});

describe('roles page', () => {
  test('lists the platform keys and every module\'s adminPermissions, and saves a role\'s keys', async () => {
    const b = new Browser(stack.app);
    await b.loginAdmin(ROOT.email, ROOT.password);
    const page = await b.get('/admin/roles');
    for (const key of ['Platform-Core-services', 'Plugin-WebPlugin-view', 'Plugin-WebPlugin-edit', 'Plugin-WebPlugin-secret']) assert.ok(page.body.includes(`value="${key}"`), key);
    const role = (await stack.web.roles.findByName('Fleet viewer'))!;
    const saved = await b.post(`/admin/roles/${role.id}`, { permissions: ['Plugin-WebPlugin-view', 'Plugin-WebPlugin-edit', 'Platform-Core-dashboard'] });
    assert.equal(saved.statusCode, 303);
    assert.deepEqual((await stack.web.roles.get(role.id))!.permissions, ['Platform-Core-dashboard', 'Plugin-WebPlugin-edit', 'Plugin-WebPlugin-view']);
    const viewer = new Browser(stack.app);
    await viewer.loginAdmin(VIEWER.email, VIEWER.password);
    assert.equal((await viewer.get('/admin/modules/Plugin/WebPlugin/settings')).statusCode, 200, 'the new key applies at once');
    await b.post(`/admin/roles/${role.id}`, { permissions: ['Plugin-WebPlugin-view', 'Platform-Core-dashboard'] });
  });
});

test('security headers on pages and assets; assets are local', async () => {
  const b = new Browser(stack.app);
  const page = await b.get('/admin/login');
  assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
  assert.equal(page.headers['x-frame-options'], 'DENY');
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
  assert.doesNotMatch(page.body, /https?:\/\//, 'no external asset');
  const css = await b.get('/assets/web.css');
  assert.equal(css.statusCode, 200);
  assert.match(String(css.headers['content-type']), /text\/css/);
  assert.equal((await b.get('/assets/web.js')).statusCode, 200);
});
