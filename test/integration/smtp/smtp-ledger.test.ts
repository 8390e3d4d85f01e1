// The Smtp ledger, one scenario run against both implementations: LocalSmtpLedger (the sends table on the platform) and
// RemoteSmtpLedger (the module's worker routes over a real HTTP listener, a worker token, the remote worker's
// WorkerApiClient). Then the worker routes themselves: worker tokens only (401 otherwise), bad bodies 400 with the
// schema's issues, an unknown send 404, and a mail body never in the platform's logs. No job slots run: tasks stay queued.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { smtpServices } from '../../../module/modules/Notification/Smtp/index.ts';
import type { MailToQueue, SmtpLedger } from '../../../module/modules/Notification/Smtp/ledger.ts';
import { RemoteSmtpLedger } from '../../../module/modules/Notification/Smtp/remote-ledger.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { WORKER_UNAUTHORIZED } from '../../../module/platform/errors.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { moduleWorkerCall } from '../../../module/platform/remote-worker.ts';
import { CustomerQueries } from '../../../module/platform/store/query/repositories/customers.ts';
import { WorkerApiClient } from '../../../module/platform/worker-api/client.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
import { quickSmtpConfig } from './smtp-fixture.ts';

const BODY_MARKER = 'Ledger-Body-Marker-5521';
const BASE = '/api/worker/modules/Notification/Smtp';

let platform: Platform;
let app: FastifyInstance;
let api: WorkerApiClient;
let dataDir: string;
let workerToken: string;
let adminToken: string;
const lines: string[] = [];

before(async () => {
  dataDir = tempDir('smtp-ledger');
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  platform = await Platform.open({ dataDir, logger, modulesConfig: quickSmtpConfig(), queueOptions: { pollMs: 20 }, moduleWatchMs: 0 });
  app = await buildPlatformApp({ platform });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  workerToken = (await platform.workerTokens.create('ledger test')).token;
  adminToken = (await platform.tokens.create('ledger test')).token;
  api = new WorkerApiClient({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, token: workerToken });
});

after(async () => {
  await api?.close();
  await app?.close();
  await platform?.close(2_000);
  removeDir(dataDir);
});

const sends = () => smtpServices(platform.modules).smtpSends!;

function queuedMail(recipient: string, extra: Partial<MailToQueue> = {}): MailToQueue {
  return {
    channel_uuid: null, recipient, subject: `For ${recipient}`, origin: { event: null }, status: 'queued',
    mail: { text: `${BODY_MARKER} text`, html: `<p>${BODY_MARKER}</p>`, attachments: [{ filename: 'a.txt', content_base64: Buffer.from('hi').toString('base64'), contentType: 'text/plain' }] },
    job: { tries: 2, backoff: 0, timeout: 30 },
    ...extra,
  } as MailToQueue;
}

async function ledgerScenario(ledger: SmtpLedger, tag: string): Promise<void> {
  // Recorded and queued: a deliverJob task on the platform's queue, bound to the channel.
  const queued = await ledger.queue(queuedMail(`${tag}@customer.example`));
  assert.ok(queued.task_id);
  const task = await platform.queue.get(queued.task_id);
  assert.equal(task?.job, 'ModuleJob');
  assert.equal((task?.input as { method?: string }).method, 'deliverJob');
  assert.deepEqual((task?.input as { args?: unknown[] }).args, [queued.send_uuid]);
  assert.equal((await sends().get(queued.send_uuid))?.task_id, queued.task_id);

  // Attempt 1 fails (not final), attempt 2 succeeds; the body comes opened, the attempt counted.
  const first = await ledger.beginDelivery(queued.send_uuid);
  assert.equal(first.state, 'open');
  assert.ok(first.state === 'open');
  assert.equal(first.attempt, 1);
  assert.deepEqual(first.send, { uuid: queued.send_uuid, recipient: `${tag}@customer.example`, subject: `For ${tag}@customer.example`, event: null, tries: 2 });
  assert.equal(first.mail?.text, `${BODY_MARKER} text`);
  assert.equal(Buffer.from(first.mail!.attachments[0].content_base64, 'base64').toString(), 'hi');
  await ledger.markFailure(queued.send_uuid, '451 4.3.0 busy', false);
  assert.deepEqual([(await sends().get(queued.send_uuid))?.status, (await sends().get(queued.send_uuid))?.last_error], ['queued', '451 4.3.0 busy']);
  const second = await ledger.beginDelivery(queued.send_uuid);
  assert.ok(second.state === 'open' && second.attempt === 2);
  await ledger.markSent(queued.send_uuid, '250 OK queued');
  const sent = (await sends().get(queued.send_uuid))!;
  assert.deepEqual([sent.status, sent.server_reply, sent.attempts], ['sent', '250 OK queued', 2]);

  // Idempotent after the success: a repeated mark keeps the first, a late failure changes nothing, no attempt opens.
  await ledger.markSent(queued.send_uuid, '250 again');
  await ledger.markFailure(queued.send_uuid, 'late failure', true);
  const still = (await sends().get(queued.send_uuid))!;
  assert.deepEqual([still.status, still.server_reply, still.sent_at], ['sent', '250 OK queued', sent.sent_at]);
  assert.deepEqual(await ledger.beginDelivery(queued.send_uuid), { state: 'sent' });
  assert.equal((await sends().get(queued.send_uuid))?.attempts, 2);

  // A final failure closes the send (body dropped); a logged mail keeps no body and queues nothing; unknown sends.
  const failing = await ledger.queue(queuedMail(`${tag}-fail@customer.example`));
  assert.ok((await ledger.beginDelivery(failing.send_uuid)).state === 'open');
  await ledger.markFailure(failing.send_uuid, '550 5.1.1 no such user', true);
  assert.deepEqual(await ledger.beginDelivery(failing.send_uuid), { state: 'closed', reason: '550 5.1.1 no such user' });
  const logged = await ledger.queue({ channel_uuid: null, recipient: `${tag}-log@customer.example`, subject: 'Logged', origin: { event: 'invoice.created' }, status: 'logged' });
  assert.equal(logged.task_id, null);
  assert.deepEqual(await ledger.beginDelivery(logged.send_uuid), { state: 'closed', reason: 'send is logged' });
  assert.deepEqual(await ledger.beginDelivery('no-such-send'), { state: 'unknown' });

  // A message event: the facts from the customers table, then, once its send exists, the earlier send.
  const customer = await new CustomerQueries(platform.store).create({ email: `${tag}-inv@customer.example`, name: `Customer ${tag}` });
  const invoice = {
    invoice_uuid: `inv-${tag}`, invoice_number: `INV-${tag}`, customer_uuid: customer.uuid, service_uuid: null, product_uuid: null, module: null,
    amount: '9.00', amount_minor: 900, currency: 'EUR', due_date: '2026-12-01', at: '2026-11-23T10:00:00.000Z',
  };
  const key = `invoice.created|${invoice.at}|${invoice.invoice_uuid}`;
  const plan = await ledger.messagePlan('invoice.created', invoice, key);
  assert.equal(plan.plan, 'mail');
  assert.ok(plan.plan === 'mail');
  assert.deepEqual([plan.facts.template, plan.facts.to, plan.facts.origin.customer_uuid, plan.facts.origin.invoice_uuid], ['invoice-created', customer.email, customer.uuid, invoice.invoice_uuid]);
  const made = await ledger.queue(queuedMail(customer.email, { origin: { ...plan.facts.origin, event_key: key } }));
  assert.deepEqual(await ledger.messagePlan('invoice.created', invoice, key), { plan: 'earlier', send_uuid: made.send_uuid, status: 'queued' });
  assert.deepEqual(await ledger.messagePlan('invoice.created', { ...invoice, customer_uuid: 'nobody', at: 'later' }, `${key}-x`), { plan: 'skipped', reason: 'no customer for invoice inv-' + tag });
}

test('LocalSmtpLedger: record and queue, delivery attempts, idempotent marks, message plans', async () => {
  await ledgerScenario(smtpServices(platform.modules).smtpLocalLedger!, 'local');
});

test('RemoteSmtpLedger through the worker routes behaves the same; no mail body reaches the platform log', async () => {
  const remote = new RemoteSmtpLedger(moduleWorkerCall(api, 'Notification', 'Smtp'));
  await ledgerScenario(remote, 'remote');
  // A mail with 3 MiB of attachments passes (the app's 256 KiB body limit is raised for this route only).
  const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
  const bigMail = queuedMail('big@customer.example', { mail: { text: 't', html: 'h', attachments: [{ filename: 'big.bin', content_base64: big }] } } as Partial<MailToQueue>);
  const queued = await remote.queue(bigMail);
  const opened = await remote.beginDelivery(queued.send_uuid);
  assert.ok(opened.state === 'open' && opened.mail?.attachments[0].content_base64 === big);
  assert.equal(lines.some((line) => line.includes(BODY_MARKER)), false, 'no mail body in the platform log');
});

test('the worker routes take worker tokens only: none or an admin token is 401', async () => {
  for (const authorization of [undefined, `Bearer ${adminToken}`, 'Bearer vpw_' + '0'.repeat(64)]) {
    for (const [url, payload] of [[`${BASE}/sends`, queuedMail('x@customer.example')], [`${BASE}/sends/x/attempts`, {}], [`${BASE}/messages/plan`, { event: 'invoice.created', payload: {}, event_key: 'k' }]] as const) {
      const res = await app.inject({ method: 'POST', url, payload, headers: authorization ? { authorization } : {} });
      assert.equal(res.statusCode, 401, `${url} with ${authorization ? 'a wrong token' : 'no token'}`);
      assert.deepEqual(res.json(), { error: WORKER_UNAUTHORIZED });
    }
  }
  assert.equal((await sends().list({ limit: 1000 })).some((s) => s.recipient === 'x@customer.example'), false, 'nothing recorded');
});

test('bad bodies answer 400 with the issues; an unknown send 404', async () => {
  const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url: BASE + url, payload: payload as object, headers: { authorization: `Bearer ${workerToken}` } });
  const cases: Array<[string, unknown, RegExp]> = [
    ['/sends', { ...queuedMail('y@customer.example'), status: 'sent' }, /^invalid request: status: /],
    ['/sends', { ...queuedMail('y@customer.example'), mail: undefined }, /^invalid request: mail: /],
    ['/sends', { ...queuedMail('y@customer.example'), job: { tries: 0, backoff: 0, timeout: 30 } }, /^invalid request: job\.tries: /],
    ['/sends', { ...queuedMail('y@customer.example'), mail: { text: 't', html: 'h', attachments: [{ filename: 'a', content_base64: 'not base64!' }] } }, /^invalid request: mail\.attachments\.0\.content_base64: not base64/],
    ['/sends/abc/sent', { reply: 250 }, /^invalid request: reply: /],
    ['/sends/abc/failures', { error: 'x' }, /^invalid request: final: /],
    ['/messages/plan', { event: 'invoice.refunded', payload: {}, event_key: 'k' }, /^invalid request: event: /],
    ['/messages/plan', { event: 'invoice.created', payload: [], event_key: '' }, /^invalid request: /],
  ];
  for (const [url, payload, error] of cases) {
    const res = await post(url, payload);
    assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
    assert.match(res.json().error, error);
  }
  assert.equal((await sends().list({ limit: 1000 })).some((s) => s.recipient === 'y@customer.example'), false, 'nothing recorded');
  for (const url of ['/sends/no-such/sent', '/sends/no-such/failures']) {
    const res = await post(url, url.endsWith('sent') ? { reply: '250' } : { error: 'x', final: true });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: 'unknown send no-such' });
  }
});
