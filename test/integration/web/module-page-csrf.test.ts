// A module admin web page gets the session's CSRF token: the VpnFleet page's "Refresh now" form (no JavaScript) posts
// with the token it was rendered with and is accepted; the same post without the token, or with a foreign one, is refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { manualClock } from '../../../shared/clock.ts';
import { CSRF_REFUSED } from '../../../module/platform/errors.ts';
import { createWebDeps } from '../../../module/platform/web/web-host.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

let platform: Platform;
let app: Awaited<ReturnType<typeof buildPlatformApp>>;
let dataDir: string;

before(async () => {
  dataDir = tempDir('web-csrf');
  platform = await Platform.open({ dataDir, clock: manualClock(new Date('2026-03-01T10:00:00Z')), logger: pino({ level: 'silent' }), moduleWatchMs: 0 });
  app = await buildPlatformApp({ platform });
  await (await createWebDeps(platform)).admins.create({ email: 'root@example.com', password: 'Root-Pass-1', role: 'Administrator' });
});

after(async () => {
  await app?.close();
  await platform?.close();
  if (dataDir) removeDir(dataDir);
});

const FLEET = '/admin/modules/Plugin/VpnFleet/fleet';
const REFRESH = '/admin/modules/Plugin/VpnFleet/fleet/refresh';

/** The `_csrf` value of the page's refresh form. */
function formToken(html: string): string {
  const form = /<form[^>]*action="[^"]*VpnFleet\/fleet\/refresh"[\s\S]*?<\/form>/.exec(html);
  assert.ok(form, 'the fleet page has the refresh form');
  const token = /name="_csrf" value="([^"]*)"/.exec(form[0])?.[1] ?? '';
  assert.ok(token.length > 10, `the refresh form carries a CSRF token, got ${JSON.stringify(token)}`);
  return token;
}

test('the fleet page form carries the session token: posting it queues a refresh, no token or a foreign one is refused', async () => {
  const b = new Browser(app);
  assert.equal((await b.loginAdmin('root@example.com', 'Root-Pass-1')).statusCode, 303);
  const page = await b.get(FLEET);
  assert.equal(page.statusCode, 200);
  const token = formToken(page.body);

  const missing = await b.post(REFRESH, {}, { csrf: false });
  assert.equal(missing.statusCode, 403);
  assert.match(missing.body, new RegExp(CSRF_REFUSED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));

  const other = new Browser(app);
  await other.loginAdmin('root@example.com', 'Root-Pass-1');
  await other.get(FLEET);
  b.csrf = other.csrf;
  assert.notEqual(other.csrf, token);
  assert.equal((await b.post(REFRESH, {})).statusCode, 403, 'a token of another session is refused');

  b.csrf = token;
  const ok = await b.post(REFRESH, {});
  assert.equal(ok.statusCode, 303, ok.body.slice(0, 300));
  assert.equal(ok.headers.location, `${FLEET}?queued=1`);
  const after = await b.get(`${FLEET}?queued=1`);
  assert.equal(after.statusCode, 200);
  assert.match(after.body, /A refresh was queued/);
  assert.notEqual(formToken(after.body), '', 'the next page has a fresh token too');
});
