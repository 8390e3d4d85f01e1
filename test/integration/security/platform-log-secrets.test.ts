// No one-time link in any platform log: a customer's service is provisioned (its "VPN is ready" mail carries a
// link), the customer makes a link in the client area and opens it on the panel (which hands out a download token);
// then the platform is asked for those paths in several spellings. With no SMTP channel and with one, every line the
// platform logged (trace level, HTTP access log included), every module_logs row and the module-log API answers hold
// neither key nor token.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import { startPanel, removeDir, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { createServer } from '../../fixtures/platform/setup.ts';
import { startVpnWebStack, type VpnWebStack } from '../../fixtures/platform/vpn-web-stack.ts';
import { Browser } from '../../fixtures/web/web-stack.ts';
import { quickSmtpConfig, startSmtpServer, type TestSmtpServer } from '../smtp/smtp-fixture.ts';

let panelProcess: PanelProcess;
let smtp: TestSmtpServer;

before(async () => {
  panelProcess = await startPanel();
  await createServer(panelProcess, 'main', '10.78.0.1/22');
  smtp = await startSmtpServer();
});

after(async () => {
  await panelProcess?.stop();
  if (panelProcess) removeDir(panelProcess.dataDir);
  await smtp?.close();
});

const LINK = /\/otl\/([0-9a-f]{80})/;

/** The customer makes a link in the client area (JSON, as the page's script does); answers its key. */
async function clientAreaLink(stack: VpnWebStack): Promise<string> {
  const b = new Browser(stack.app);
  assert.equal((await b.loginCustomer(stack.customer.email, stack.customer.password)).statusCode, 303);
  await b.get(`/client/services/${stack.service}`);
  const res = await b.json('POST', `/client/services/${stack.service}/ajax/connect/otl`, {});
  assert.equal(res.statusCode, 200, res.body);
  const key = LINK.exec(JSON.parse(res.body).data.url)?.[1];
  assert.ok(key, res.body);
  return key;
}

/** Opens the link on the panel (consumes it) and answers the download token of that view. */
async function openOnPanel(key: string): Promise<string> {
  const page = await fetch(`${panelProcess.url}/otl/${key}`, { method: 'POST' }).then((r) => r.text());
  const token = new RegExp(`${key}/([A-Za-z0-9_-]{20,})/wireguard\\.conf`).exec(page)?.[1];
  assert.ok(token, 'the panel page links the configuration download');
  return token;
}

/** Asks the platform for the link's paths in several spellings (each is answered 404 and written to the access log). */
async function askPlatform(stack: VpnWebStack, key: string, token: string): Promise<void> {
  const paths = [
    `/otl/${key}`, `/%6ftl/${key}`, `//otl/${key}`, `/client/../otl/${key}?x=1`,
    `/otl/${key}/${token}/wireguard.conf`, `/%6ftl/${key}/${token}/wireguard.conf`, `/otl%2f${key}%2f${token}%2fwireguard.conf`,
  ];
  for (const url of paths) assert.equal((await stack.app.inject({ method: 'GET', url })).statusCode, 404, url);
}

/** Everything the platform recorded: log lines, module_logs rows, the module-log API's answers, the sends table. */
async function everything(stack: VpnWebStack): Promise<string> {
  const token = (await stack.platform.tokens.create('log check')).token;
  const api = [];
  for (const module of ['Smtp', 'VpnProduct']) {
    const res = await stack.app.inject({ method: 'GET', url: `/api/admin/module-logs?module=${module}&per_page=100`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 200);
    api.push(res.body);
  }
  const rows = (await stack.platform.moduleLogStore.read({ limit: 10_000 }));
  assert.ok(rows.some((r) => r.module_name === 'Smtp' && r.action === 'send'), 'the mail is in the module log (named, not its body)');
  const sends = (await smtpServices(stack.platform.modules).smtpSends!.list({ limit: 1000 }));
  return [stack.lines.join('\n'), JSON.stringify(rows), ...api, JSON.stringify(sends)].join('\n');
}

function assertNoSecret(text: string, secrets: string[]): void {
  for (const secret of secrets) assert.equal(text.includes(secret), false, `a secret (${secret.slice(0, 6)}…) is in a platform log`);
  assert.doesNotMatch(text, /[0-9a-f]{80}/, 'no one-time-link key of any kind');
  assert.match(text, /\/otl\/\[redacted\]\/\[redacted\]\/wireguard\.conf/, 'the access log names the path, masked');
}

test('no SMTP channel: the unsent "VPN is ready" mail, the client-area link and its download token are in no log', async () => {
  const stack = await startVpnWebStack(panelProcess, quickSmtpConfig(), { customer: { email: 'nora@logs.example', password: 'Nora-Pass-11' } });
  try {
    const send = (await smtpServices(stack.platform.modules).smtpSends!.list({ service_uuid: stack.service })).find((s) => s.event === 'service.provisioned');
    assert.equal(send?.status, 'logged');
    const warn = stack.lines.map((l) => JSON.parse(l)).find((l) => l.level === 40 && l.send_uuid === send!.uuid);
    assert.deepEqual([warn?.template, warn?.to, warn?.text], ['service-completed', 'nora@logs.example', undefined], 'the warning names the mail, without its text');
    const key = await clientAreaLink(stack);
    const token = await openOnPanel(key);
    await askPlatform(stack, key, token);
    const recorded = await everything(stack);
    assertNoSecret(recorded, [key, token]);
    assert.match(recorded, /no one-time link in the mail: no SMTP server configured: the mail is only recorded, so no link is made/,
      'no link is made for a mail that is only recorded');
  } finally {
    await stack.close();
  }
});

test('SMTP configured: the delivered mail carries its link, and neither it nor the other link and token is in any log', async () => {
  const stack = await startVpnWebStack(panelProcess, quickSmtpConfig(), {
    customer: { email: 'sam@logs.example', password: 'Sam-Pass-123' },
    beforeService: async (platform) => {
      await platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Customer mail', {
        host: '127.0.0.1', port: smtp.port, encryption: 'starttls', username: smtp.user, password: smtp.password, sender: 'VPN <noreply@vpn.example>', ca: smtp.cert,
      });
    },
  });
  try {
    const [mail] = await smtp.waitForMails(1, 30_000);
    const mailKey = LINK.exec(String(mail.text))?.[1];
    assert.ok(mailKey, 'the delivered mail carries a one-time link');
    const key = await clientAreaLink(stack);
    const token = await openOnPanel(key);
    await askPlatform(stack, key, token);
    await askPlatform(stack, mailKey, token);
    assertNoSecret(await everything(stack), [mailKey, key, token]);
  } finally {
    await stack.close();
  }
});
