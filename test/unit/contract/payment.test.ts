// Payment modules: signature check before handling, `type` → handler dispatch (the spec's Events table), GET `ok`.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { ModuleRequest } from '../../../module/contract/http.ts';
import { Payment, type Invoice, type WebhookPayload } from '../../../module/contract/payment.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';

const WEBHOOK_SECRET = 'whsec-test-abcdef';

class SampleGateway extends Payment {
  handled: Array<[string, WebhookPayload]> = [];
  failNext = false;

  getClientAreaHtml(data: { invoice: Invoice }): string {
    return this.view('client_area.pay', { number: data.invoice.number, amount: data.invoice.dueAmount().toFixed(2), currency: data.invoice.currency });
  }
  getSettingsPage(): string {
    return `<input name="webhook_url" value="/webhooks/${this.payment_gateway_uuid}">`;
  }
  protected verifyWebhook(request: ModuleRequest): boolean {
    const given = Buffer.from(String(request.headers['x-signature'] ?? ''), 'hex');
    const wanted = createHmac('sha256', String(this.module_data.webhook_secret)).update(request.rawBody ?? '').digest();
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }
  onPaymentSuccess(payload: WebhookPayload): unknown {
    if (this.failNext) throw new Error('ledger offline');
    this.handled.push(['success', payload]);
    return { status: 'success', invoice: (payload.data as { invoice?: string } | undefined)?.invoice };
  }
  onPaymentFailed(payload: WebhookPayload): undefined {
    this.handled.push(['failed', payload]);
  }
}

function signed(body: unknown, secret = WEBHOOK_SECRET): ModuleRequest {
  const raw = JSON.stringify(body);
  return { method: 'POST', headers: { 'x-signature': createHmac('sha256', secret).update(raw).digest('hex') }, query: {}, body: raw, rawBody: raw };
}

let p: TestPlatform;
let gateway: SampleGateway;
beforeEach(() => {
  p = makePlatform();
  gateway = new SampleGateway(p.ctx);
  gateway.payment_gateway_uuid = 'gw-1';
  gateway.getModuleData({ secret_key: ' sk_live_x ', webhook_secret: WEBHOOK_SECRET, sandbox: '1', label: ' <b>Stripe</b> ' });
});
afterEach(() => p.cleanup());

test('getModuleData sanitizes, coerces the sandbox flag and keeps secrets byte for byte', () => {
  assert.deepEqual(gateway.module_data, { secret_key: ' sk_live_x ', webhook_secret: WEBHOOK_SECRET, sandbox: true, label: 'Stripe' });
  assert.equal(gateway.module_type, 'Payment');
});

test('payment_intent.succeeded → onPaymentSuccess, its array becomes the 200 body', async () => {
  const res = await gateway.apiWebhookPost(signed({ type: 'payment_intent.succeeded', data: { invoice: 'INV-1' } }));
  assert.deepEqual(res, { status: 200, body: { status: 'success', invoice: 'INV-1' } });
  assert.deepEqual(gateway.handled.map(([kind]) => kind), ['success']);
});

test('payment_intent.payment_failed → onPaymentFailed, nothing returned answers ok', async () => {
  const res = await gateway.apiWebhookPost(signed({ type: 'payment_intent.payment_failed' }));
  assert.deepEqual(res, { status: 200, body: 'ok' });
  assert.deepEqual(gateway.handled.map(([kind]) => kind), ['failed']);
});

test('any other type, a missing type or a non-object body answers ok without a handler', async () => {
  for (const body of [{ type: 'charge.refunded' }, {}, { type: 'toString' }, { type: 'constructor' }, [1, 2], 'not json']) {
    assert.deepEqual(await gateway.apiWebhookPost(signed(body)), { status: 200, body: 'ok' });
  }
  assert.deepEqual(gateway.handled, []);
});

test('the signature is checked before any handler', async () => {
  const forged = signed({ type: 'payment_intent.succeeded' }, 'wrong-secret');
  assert.deepEqual(await gateway.apiWebhookPost(forged), { status: 400, body: 'Invalid signature' });
  assert.deepEqual(await gateway.apiWebhookPost({ ...forged, headers: {} }), { status: 400, body: 'Invalid signature' });
  assert.deepEqual(gateway.handled, []);
  assert.equal((await p.logs.read({ level: 'error' })).length, 2);
});

test('a handler throw answers 500 with a generic message and is logged', async () => {
  gateway.failNext = true;
  const res = await gateway.apiWebhookPost(signed({ type: 'payment_intent.succeeded' }));
  assert.deepEqual(res, { status: 500, body: { status: 'error', message: 'An unexpected error occurred' } });
  const [log] = (await p.logs.read({ level: 'error' }));
  assert.deepEqual(log.response, { name: 'Error', message: 'ledger offline' });
  assert.equal(log.context.payment_gateway_uuid, 'gw-1');
});

test('GET verification answers ok / 200; refund defaults to an error array', async () => {
  assert.deepEqual(await gateway.apiWebhookGet({ method: 'GET', headers: {}, query: {}, body: undefined }), { status: 200, body: 'ok' });
  assert.deepEqual(await gateway.refund('pi_1', 10), { status: 'error', message: 'Refunds are not supported' });
});

test('module logs of webhooks never hold the gateway secrets', async () => {
  await gateway.apiWebhookPost(signed({ type: 'payment_intent.succeeded', secret_key: 'sk_live_x' }));
  const all = JSON.stringify(p.db.prepare('SELECT * FROM module_logs').all()) + p.logLines.join('');
  assert.ok(!all.includes(WEBHOOK_SECRET));
  assert.ok(!all.includes('sk_live_x'));
});

test('getClientAreaHtml renders the module view with the invoice members, escaped', async () => {
  const views = mkdtempSync(join(tmpdir(), 'vpnhost-payviews-'));
  const q = makePlatform({ viewsDir: views });
  try {
    mkdirSync(join(views, 'modules', 'Payment', 'SampleGateway', 'client_area'), { recursive: true });
    writeFileSync(join(views, 'modules', 'Payment', 'SampleGateway', 'client_area', 'pay.hbs'), 'Pay {{number}}: {{amount}} {{currency}}');
    const gw = new SampleGateway(q.ctx);
    const invoice: Invoice = { uuid: 'inv-uuid', number: '<2026-001>', dueAmount: () => 12.5, currency: 'EUR' };
    assert.equal(await gw.getClientAreaHtml({ invoice }), 'Pay &lt;2026-001&gt;: 12.50 EUR');
  } finally {
    q.cleanup();
    rmSync(views, { recursive: true, force: true });
  }
});
