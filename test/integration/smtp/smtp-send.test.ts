// The Smtp module against a real SMTP server (smtp-server on loopback, STARTTLS with a self-signed certificate, AUTH):
// sealed settings, delivery of text + HTML + attachment parsed with mailparser, 4xx/5xx replies retried through the
// Task queue, a 5xx after the last try failing with the server's reply logged and the secrets redacted.
import assert from 'node:assert/strict';
import { storedBytes } from '../../fixtures/platform/stored-bytes.ts';
import { after, before, test } from 'node:test';
import type { Smtp } from '../../../module/modules/Notification/Smtp/smtp.ts';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { openSmtpPlatform, startSmtpServer, type TestSmtpServer } from './smtp-fixture.ts';

let server: TestSmtpServer;
let env: Awaited<ReturnType<typeof openSmtpPlatform>>;
let channel: string;

before(async () => {
  server = await startSmtpServer();
  env = await openSmtpPlatform();
});

after(async () => {
  await env?.close();
  await server?.close();
});

async function channelInstance(uuid = channel): Promise<Smtp> {
  const found = (await env.platform.moduleInstances.get(uuid))!;
  return env.platform.modules.instance<Smtp>('Notification', 'Smtp', { payment_gateway_uuid: found.uuid, module_data: found.module_data });
}

async function sendAndWait(smtp: Smtp, data: Record<string, unknown>) {
  const result = await smtp.send(data);
  assert.equal(result.status, 'success', JSON.stringify(result));
  const answer = result as { send_uuid: string; task_id: string };
  const task = await env.platform.queue.waitFor(answer.task_id, 30_000);
  return { task, send: (await smtpServices(env.platform.modules).smtpSends!.get(answer.send_uuid))! };
}

/** Everything the platform wrote: the database files and every log line. */
function everything(): string {
  return storedBytes(env.dataDir) + env.lines.join('\n');
}

test('getModuleData refuses bad settings with the error bag (422) and the channel is stored sealed', async () => {
  await assert.rejects(env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Broken', { host: 'smtp example', port: 70000, encryption: 'ssl3', sender: 'nobody' }), (error: any) => {
    assert.equal(error.statusCode, 422);
    assert.deepEqual(error.errors, {
      host: ['The host field format is invalid.'],
      port: ['The port field must not be greater than 65535.'],
      encryption: ['The selected encryption is invalid.'],
      sender: ['The sender field must be a valid email address.'],
    });
    return true;
  });
  const created = await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Relay', {
    host: '127.0.0.1', port: String(server.port), encryption: 'STARTTLS', username: server.user, password: server.password,
    sender: 'VPN Host <noreply@vpn.example>', ca: server.cert,
  });
  channel = created.uuid;
  assert.deepEqual(created.secret_keys, ['password']);
  assert.equal(JSON.stringify(created).includes(server.password), false, 'the answer holds no password');
  assert.equal(created.module_data.encryption, 'starttls');
  assert.equal(created.module_data.port, server.port);
  assert.equal(everything().includes(server.password), false, 'the password is sealed at rest');
});

test('send validation: each bad field answers 422 with its message, nothing is queued', async () => {
  const smtp = await channelInstance();
  const bad = await smtp.send({ to: 'not-an-address', subject: 'x'.repeat(256), message: '', attachments: [{ content: 'a' }, 'nope'] });
  assert.equal(bad.status, 'error');
  assert.equal((bad as any).code, 422);
  assert.deepEqual((bad as any).message, {
    to: ['The to field must be a valid email address.'],
    subject: ['The subject field must not be greater than 255 characters.'],
    message: ['The message field is required.'],
    'attachments.0.filename': ['The filename field is required.'],
    'attachments.1': ['Each attachment must be an object.'],
  });
  const notArray = await smtp.send({ to: 'a@b.example', subject: 's', message: 'm', attachments: 'file.txt' });
  assert.deepEqual((notArray as any).errors, { attachments: ['The attachments field must be an array.'] });
  assert.deepEqual((await smtpServices(env.platform.modules).smtpSends!.list()), []);
});

test('a mail goes over STARTTLS with AUTH: subject, recipient, text, HTML and attachment arrive', async () => {
  const smtp = await channelInstance();
  const { task, send } = await sendAndWait(smtp, {
    to: ' carol@customer.example ', subject: 'Your VPN is ready',
    message: '<p>Hello <b>Carol</b>,</p><p>your VPN is ready.</p>',
    attachments: [{ filename: 'wg0.conf', content: '[Interface]\nAddress = 10.0.0.2/32\n', contentType: 'text/plain' },
      { filename: 'logo.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' }],
  });
  assert.equal(task.status, 'completed', String(task.lastError));
  const [mail] = await server.waitForMails(1);
  assert.equal(mail.subject, 'Your VPN is ready');
  assert.deepEqual(server.envelopes[0], ['carol@customer.example']);
  assert.equal((mail.to as any).text, 'carol@customer.example');
  assert.equal((mail.from as any).value[0].address, 'noreply@vpn.example');
  assert.equal((mail.from as any).value[0].name, 'VPN Host');
  assert.equal(mail.html, '<p>Hello <b>Carol</b>,</p><p>your VPN is ready.</p>');
  assert.match(String(mail.text), /Hello Carol,\s+your VPN is ready\./);
  assert.deepEqual(mail.attachments.map((a) => [a.filename, a.content.toString('base64')]), [
    ['wg0.conf', Buffer.from('[Interface]\nAddress = 10.0.0.2/32\n').toString('base64')],
    ['logo.bin', Buffer.from([0, 1, 2, 255]).toString('base64')],
  ]);
  assert.deepEqual(server.authOverTls, [true], 'AUTH happened once, inside STARTTLS');
  assert.equal(send.status, 'sent');
  assert.equal(send.attempts, 1);
  assert.match(String(send.server_reply), /250.*queued as test-1/);
});

test('a 4xx then a 5xx reply are retried through the queue; the third try delivers', async () => {
  const before = server.received.length;
  server.script.push({ at: 'rcpt', code: 451, text: '4.3.0 Mailbox busy, try later' }, { at: 'data', code: 554, text: '5.7.1 Message rejected for now' });
  const { task, send } = await sendAndWait(await channelInstance(), { to: 'dave@customer.example', subject: 'Retry me', message: 'plain text body' });
  assert.equal(task.status, 'completed', String(task.lastError));
  assert.equal(task.attempts, 3);
  assert.equal(send.status, 'sent');
  assert.equal(send.attempts, 3);
  await server.waitForMails(before + 1);
  const mail = server.received[before];
  assert.equal(mail.text?.trim(), 'plain text body');
  assert.match(String(mail.html), /white-space:pre-wrap">plain text body</);
  const retries = (await env.platform.moduleLogStore.read({ name: 'Smtp', level: 'info' })).filter((r) => (r.response as any)?.status === 'retrying');
  assert.deepEqual(retries.map((r) => (r.response as any).code).sort(), [451, 554]);
  assert.ok(retries.some((r) => /Mailbox busy/.test((r.response as any).reply)));
});

test('a 5xx on every try fails the send with the reply in the module log and the secrets redacted', async () => {
  for (let i = 0; i < 3; i++) server.script.push({ at: 'rcpt', code: 550, text: `5.7.1 Relay denied for ${server.user} password=${server.password} (${server.password})` });
  const { task, send } = await sendAndWait(await channelInstance(), { to: 'erin@customer.example', subject: 'Doomed', message: 'never arrives' });
  assert.equal(task.status, 'failed');
  assert.equal(task.attempts, 3);
  assert.equal(send.status, 'failed');
  assert.match(String(send.last_error), /^550 5\.7\.1 Relay denied for mailer password=\[redacted\] \(\[redacted\]\) \(reply to RCPT TO\)$/);
  const errors = (await env.platform.moduleLogStore.read({ name: 'Smtp', level: 'error' })).filter((r) => (r.request as any)?.send_uuid === send.uuid);
  assert.equal(errors.length, 1, 'one error entry: the last try');
  assert.equal((errors[0].response as any).status, 'failed');
  assert.match((errors[0].response as any).reply, /550 5\.7\.1 Relay denied/);
  assert.equal(everything().includes(server.password), false, 'the password is nowhere: module log, task record, platform log');
  assert.equal(everything().includes(Buffer.from(server.password).toString('base64')), false);
});

test('wrong credentials: 535 after the last try, the tried password never logged', async () => {
  const wrong = await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Wrong', {
    host: '127.0.0.1', port: server.port, encryption: 'starttls', username: server.user, password: 'Wrong-Pass-55671', sender: 'noreply@vpn.example', ca: server.cert,
  });
  const { task, send } = await sendAndWait(await channelInstance(wrong.uuid), { to: 'frank@customer.example', subject: 'Auth', message: 'x' });
  assert.equal(task.status, 'failed');
  assert.equal(send.status, 'failed');
  assert.match(String(send.last_error), /^535 .* \(reply to AUTH PLAIN\)$/);
  assert.equal(everything().includes('Wrong-Pass-55671'), false);
});

test('encryption starttls refuses a server that does not offer STARTTLS: no AUTH, no mail in clear text', async () => {
  const plain = await startSmtpServer('mailer', 'Plain-Relay-Pass-3390', { noStartTls: true });
  try {
    const channel = await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Downgraded', {
      host: '127.0.0.1', port: plain.port, encryption: 'starttls', username: plain.user, password: plain.password, sender: 'noreply@vpn.example',
    });
    const { task, send } = await sendAndWait(await channelInstance(channel.uuid), { to: 'hal@customer.example', subject: 'Secret plans', message: 'x' });
    assert.equal(task.status, 'failed');
    assert.equal(send.status, 'failed');
    assert.deepEqual(plain.authOverTls, [], 'the password was never sent');
    assert.equal(plain.received.length, 0);
    assert.equal(send.last_error, '500 Error: command not recognized (reply to STARTTLS)');
    const open = await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Plain on purpose', {
      host: '127.0.0.1', port: plain.port, encryption: 'none', username: plain.user, password: plain.password, sender: 'noreply@vpn.example',
    });
    const sent = await sendAndWait(await channelInstance(open.uuid), { to: 'hal@customer.example', subject: 'Plain', message: 'x' });
    assert.equal(sent.task.status, 'completed', 'encryption none is the operator\'s explicit choice');
    assert.deepEqual(plain.authOverTls, [false]);
  } finally {
    await plain.close();
  }
});

test('a refused connection is a transient failure, retried, then failed', async () => {
  const closed = await env.platform.moduleAdmin.createInstance('Notification', 'Smtp', 'Closed', { host: '127.0.0.1', port: 1, encryption: 'tls', sender: 'noreply@vpn.example' });
  const { task, send } = await sendAndWait(await channelInstance(closed.uuid), { to: 'gina@customer.example', subject: 'Nobody home', message: 'x' });
  assert.equal(task.status, 'failed');
  assert.equal(send.attempts, 3);
  assert.match(String(send.last_error), /ECONNREFUSED/);
  const entry = (await env.platform.moduleLogStore.read({ name: 'Smtp', level: 'error' })).find((r) => (r.request as any)?.send_uuid === send.uuid);
  assert.equal((entry?.response as any).transient, true);
});

test('without an SMTP server configured the e-mail is recorded as logged and named in the log, never its text', async () => {
  const unconfigured = env.platform.modules.instance<Smtp>('Notification', 'Smtp');
  const result = await unconfigured.send({ to: 'demo@customer.example', subject: 'Demo mail', message: 'Connect with https://panel.example/otl/abc' });
  assert.equal(result.status, 'success');
  assert.equal((result as any).delivery, 'logged');
  const record = (await smtpServices(env.platform.modules).smtpSends!.get((result as any).send_uuid))!;
  assert.equal(record.status, 'logged');
  const entry = (await env.platform.moduleLogStore.read({ name: 'Smtp', level: 'info' })).find((r) => (r.request as any)?.send_uuid === record.uuid);
  assert.deepEqual(entry?.request, { send_uuid: record.uuid, event: null, template: null, to: 'demo@customer.example', subject: 'Demo mail', attachments: 0 });
  const warning = env.lines.map((line) => JSON.parse(line)).find((line) => line.send_uuid === record.uuid && line.level === 40);
  assert.equal(warning?.subject, 'Demo mail', 'the unsent mail is named in the platform log at warn (shown at the demo level)');
  const everything = env.lines.join('\n') + JSON.stringify((await env.platform.moduleLogStore.read({ limit: 1000 })));
  assert.equal(everything.includes('/otl/abc'), false, 'its text is in no log');
});

test('GET /api/admin/smtp/sends lists the recorded sends (no bodies) behind an admin token', async () => {
  const app = await buildPlatformApp({ platform: env.platform });
  try {
    const token = (await env.platform.tokens.create('smtp test')).token;
    assert.equal((await app.inject({ method: 'GET', url: '/api/admin/smtp/sends' })).statusCode, 401);
    const res = await app.inject({ method: 'GET', url: '/api/admin/smtp/sends?limit=500', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 200);
    const sends = res.json().sends as any[];
    assert.deepEqual(sends.map((s) => [s.recipient, s.status]), [
      ['demo@customer.example', 'logged'], ['gina@customer.example', 'failed'], ['hal@customer.example', 'sent'], ['hal@customer.example', 'failed'], ['frank@customer.example', 'failed'],
      ['erin@customer.example', 'failed'], ['dave@customer.example', 'sent'], ['carol@customer.example', 'sent'],
    ]);
    assert.equal('mail_sealed' in sends[0], false);
    assert.equal(res.body.includes('never arrives'), false, 'no body in the listing');
    const bad = await app.inject({ method: 'GET', url: '/api/admin/smtp/sends?limit=0', headers: { authorization: `Bearer ${token}` } });
    assert.equal(bad.statusCode, 400);
  } finally {
    await app.close();
  }
});
