// The bound on a customer's one-time links (client area, VpnProduct's connect/otl): one live link per service on the
// panel (a new one revokes the earlier ones, the "VPN is ready" mail's included), one made at a time (a burst of
// concurrent requests cannot pile links up), and at most `otl_links.limit` per window, refused with 429 and the wait.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { LINK_BUSY, LINK_LIMIT_REACHED } from '../../../module/modules/Product/VpnProduct/link-bound.ts';
import { panel } from '../../fixtures/platform/http.ts';
import { startPanel, removeDir, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { createServer } from '../../fixtures/platform/setup.ts';
import { startVpnWebStack, type VpnWebStack } from '../../fixtures/platform/vpn-web-stack.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { quickSmtpConfig } from '../smtp/smtp-fixture.ts';

const BOUND = { limit: 3, window_minutes: 10 };
let panelProcess: PanelProcess;
let stack: VpnWebStack;
let account: string;

before(async () => {
  panelProcess = await startPanel();
  await createServer(panelProcess, 'main', '10.79.0.1/22');
  const modules = quickSmtpConfig();
  modules.modules.Product.VpnProduct = { ...modules.modules.Product.VpnProduct, otl_links: BOUND };
  stack = await startVpnWebStack(panelProcess, modules, { customer: { email: 'lena@links.example', password: 'Lena-Pass-11' } });
  account = String((await stack.platform.ops.describeService(stack.service)).provision_data.account_name);
});

after(async () => {
  await stack?.close();
  await panelProcess?.stop();
  if (panelProcess) removeDir(panelProcess.dataDir);
});

/** Listed keys of the account's live links on the panel. */
async function liveLinks(): Promise<string[]> {
  const list = await panel<{ olts: Record<string, { account: string; key: string }> }>(panelProcess.url, panelProcess.accessHash, 'GET', '/otl/list');
  return Object.values(list.msg.olts).filter((l) => l.account === account).map((l) => l.key);
}

/** The limit's text, with whatever wait (minutes) is left of the window. */
const isLimitText = (message: string) => Array.from({ length: BOUND.window_minutes }, (_, i) => LINK_LIMIT_REACHED(BOUND, i + 1)).includes(message);

const listedKey = (url: string) => createHash('sha256').update(/\/otl\/([0-9a-f]{80})$/.exec(url)![1]).digest('hex');

test('one live link per service, one made at a time, at most the bound per window', async () => {
  assert.equal((await liveLinks()).length, 0, 'the "VPN is ready" mail, only recorded (no SMTP channel), made no link');
  const b = new Browser(stack.app);
  await b.loginCustomer(stack.customer.email, stack.customer.password);
  await b.get(`/client/services/${stack.service}`);
  const url = `/client/services/${stack.service}/ajax/connect/otl`;

  // A burst, as a script would send it: what is made stays within the bound, the rest is refused with a reason.
  const burst = await Promise.all(Array.from({ length: 8 }, () => b.json('POST', url, {})));
  const made = burst.filter((r) => r.statusCode === 200).map((r) => JSON.parse(r.body).data.url as string);
  assert.ok(made.length >= 1 && made.length <= BOUND.limit, `made ${made.length}`);
  for (const refused of burst.filter((r) => r.statusCode !== 200)) {
    assert.equal(refused.statusCode, 429);
    const message = JSON.parse(refused.body).message;
    assert.ok(message === LINK_BUSY || isLimitText(message), refused.body);
  }
  assert.equal((await liveLinks()).length, 1, 'after the burst the service has one live link');

  // Up to the bound, each new link replaces the one before (the earlier link's page is gone).
  const links = [...made];
  while (links.length < BOUND.limit) {
    const res = await b.json('POST', url, {});
    assert.equal(res.statusCode, 200, res.body);
    const answer = JSON.parse(res.body).data;
    assert.match(answer.note, /replaces every earlier one-time link/);
    links.push(answer.url);
    assert.deepEqual(await liveLinks(), [listedKey(answer.url)], 'only the newest link lives');
  }
  const earlier = await fetch(links[0]);
  assert.equal(earlier.status, 404, 'an earlier link no longer opens');

  // Past the bound: 429 with the wait (JSON for the page script, a page for a browser without JavaScript).
  const over = await b.json('POST', url, {});
  assert.equal(over.statusCode, 429);
  assert.ok(isLimitText(JSON.parse(over.body).message), over.body);
  assert.ok(Number(over.headers['retry-after']) > 0 && Number(over.headers['retry-after']) <= 600);
  const form = await b.post(url, {});
  assert.equal(form.statusCode, 429);
  assert.match(form.body, /data-vpn-otl-refused>You can create 3 one-time links for this service every 10 minutes/);
  assert.deepEqual(await liveLinks(), [listedKey(links.at(-1)!)], 'the newest link still works');
});
