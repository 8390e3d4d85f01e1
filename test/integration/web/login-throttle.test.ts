// Login throttling through inject: 5 failed logins for one address (or from one IP) within 15 minutes lock further
// attempts — even with the right password — for 15 minutes on the same login page with "Too many attempts"; admin and
// customer logins alike; older failures fall out of the window; the lock ends after 15 minutes (manual clock).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LOGIN_FAILED, LOGIN_THROTTLED } from '../../../module/platform/errors.ts';
import { Browser, startWebStack, type WebStack } from '../../fixtures/web/web-stack.ts';

let stack: WebStack;
const MINUTE = 60_000;

before(async () => {
  stack = await startWebStack();
  await stack.web.admins.create({ email: 'root@example.com', password: 'Root-Pass-1', role: 'Administrator' });
  await stack.web.customers.create({ email: 'carol@example.com', password: 'Carol-Pass-1' });
  await stack.web.customers.create({ email: 'dave@example.com', password: 'Dave-Pass-1' });
});

after(async () => {
  await stack?.close();
});

/** A login from `ip` (inject's remoteAddress) with a fresh form token. */
async function login(kind: 'admin' | 'client', email: string, password: string, ip = '127.0.0.1') {
  const b = new Browser(stack.app);
  await b.get(`/${kind}/login`);
  return stack.app.inject({
    method: 'POST', url: `/${kind}/login`, remoteAddress: ip,
    payload: new URLSearchParams({ email, password, _csrf: b.csrf }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: [...b.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
}

test('admin: 5 failures lock the address for 15 minutes, the right password included; then it logs in again', async () => {
  for (let i = 0; i < 5; i += 1) {
    const res = await login('admin', 'root@example.com', 'wrong');
    assert.equal(res.statusCode, 401);
    assert.ok(res.body.includes(LOGIN_FAILED));
  }
  const locked = await login('admin', 'Root@Example.com', 'Root-Pass-1');
  assert.equal(locked.statusCode, 429);
  assert.ok(locked.body.includes(LOGIN_THROTTLED), 'the login page says too many attempts');
  assert.match(locked.body, /name="password"/, 'the same login page');
  assert.doesNotMatch(String(locked.headers['set-cookie'] ?? ''), /vh_admin=[^;]/, 'no session issued');
  stack.clock.advance(14 * MINUTE);
  assert.equal((await login('admin', 'root@example.com', 'Root-Pass-1')).statusCode, 429, 'still locked at 14 minutes');
  stack.clock.advance(MINUTE + 1000);
  assert.equal((await login('admin', 'root@example.com', 'Root-Pass-1')).statusCode, 303, 'the lock ends after 15 minutes');
});

test('failures spread over more than 15 minutes do not lock; a success clears the address count', async () => {
  for (let i = 0; i < 4; i += 1) assert.equal((await login('admin', 'root@example.com', 'wrong')).statusCode, 401);
  stack.clock.advance(16 * MINUTE);
  assert.equal((await login('admin', 'root@example.com', 'wrong')).statusCode, 401, 'the old four fell out of the window');
  assert.equal((await login('admin', 'root@example.com', 'Root-Pass-1')).statusCode, 303);
  stack.clock.advance(16 * MINUTE);
});

test('customer: one IP failing for several addresses is locked for all of them; another IP is not', async () => {
  const ip = '198.51.100.7';
  const emails = ['a@example.com', 'b@example.com', 'c@example.com', 'carol@example.com', 'e@example.com'];
  for (const email of emails) assert.equal((await login('client', email, 'wrong', ip)).statusCode, 401);
  const locked = await login('client', 'dave@example.com', 'Dave-Pass-1', ip);
  assert.equal(locked.statusCode, 429);
  assert.ok(locked.body.includes(LOGIN_THROTTLED));
  assert.match(locked.body, /name="password"/);
  assert.equal((await login('client', 'dave@example.com', 'Dave-Pass-1', '198.51.100.8')).statusCode, 303, 'another IP logs in');
  stack.clock.advance(15 * MINUTE + 1000);
  assert.equal((await login('client', 'dave@example.com', 'Dave-Pass-1', ip)).statusCode, 303, 'the IP lock ends after 15 minutes');
});

test('customer: 5 failures for one address from different IPs lock that address; admin logins are counted apart', async () => {
  for (let i = 0; i < 5; i += 1) assert.equal((await login('client', 'carol@example.com', 'wrong', `203.0.113.${i + 1}`)).statusCode, 401);
  const locked = await login('client', 'carol@example.com', 'Carol-Pass-1', '203.0.113.50');
  assert.equal(locked.statusCode, 429);
  assert.ok(locked.body.includes(LOGIN_THROTTLED));
  assert.equal((await login('admin', 'root@example.com', 'Root-Pass-1', '203.0.113.1')).statusCode, 303, 'the admin login is not locked by customer failures');
});
