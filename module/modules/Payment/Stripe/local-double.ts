// A local stand-in for Stripe's API (test mode of the demo, and the tests' double): Checkout Sessions and Refunds over
// the library's wire format, a payment page whose Pay/Decline buttons send signed PaymentIntent events (the library's
// test-header helper and the endpoint's signing secret) to the gateway's webhook URL. Never charges anything.
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { stripeWebhooks } from './client.ts';

export interface LocalDoubleOptions {
  /** The secret key the module is configured with (requests with another bearer key get 401). */
  secretKey: string;
  /** The endpoint signing secret events are signed with. */
  webhookSecret: string;
  /** Where events go: the platform's `/webhooks/payment/<gateway_uuid>` (settable later). */
  webhookUrl?: string;
  /** Seconds since the epoch used in the signature header (the platform's clock in tests). */
  now?: () => number;
}

/** One API call the double received (tests assert idempotency keys, amounts, metadata). */
export interface DoubleRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  form: Record<string, string>;
}

interface Session {
  id: string;
  amount: number;
  currency: string;
  metadata: Record<string, string>;
  success_url: string;
  cancel_url: string;
  payment_intent: string | null;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

/** Form fields under `prefix[...]` as a flat object (`metadata[a]=1` → `{a: '1'}`). */
function under(form: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(form)) if (key.startsWith(`${prefix}[`) && key.endsWith(']')) out[key.slice(prefix.length + 1, -1)] = value;
  return out;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export class StripeLocalDouble {
  readonly requests: DoubleRequest[] = [];
  readonly sessions = new Map<string, Session>();
  readonly intents = new Map<string, { amount: number; currency: string; refunded: number }>();
  /** When set, `POST /v1/refunds` answers this Stripe error (status 402). */
  failRefunds: string | null = null;
  webhookUrl: string | null;
  private readonly app: FastifyInstance;
  private readonly idempotent = new Map<string, unknown>();
  private base = '';

  constructor(private readonly opts: LocalDoubleOptions) {
    this.webhookUrl = opts.webhookUrl ?? null;
    this.app = Fastify({ logger: false });
    this.app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    this.routes();
  }

  /** Listens on 127.0.0.1 (`port` 0 = any free port); resolves with the base URL (the module's `api_base`). */
  async listen(port = 0): Promise<string> {
    const address = await this.app.listen({ host: '127.0.0.1', port });
    this.base = address;
    return address;
  }

  close(): Promise<void> {
    return this.app.close();
  }

  /** Pays a session as a customer would: a signed `payment_intent.succeeded`; resolves with the webhook's status. */
  pay(sessionId: string, overrides: { amount?: number; currency?: string } = {}): Promise<number> {
    return this.complete(sessionId, true, overrides);
  }

  /** Declines a session: a signed `payment_intent.payment_failed`. */
  decline(sessionId: string): Promise<number> {
    return this.complete(sessionId, false, {});
  }

  private async complete(sessionId: string, ok: boolean, overrides: { amount?: number; currency?: string }): Promise<number> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no such session: ${sessionId}`);
    if (!this.webhookUrl) throw new Error('the double has no webhook URL');
    const intentId = session.payment_intent ?? id('pi');
    session.payment_intent = intentId;
    const amount = overrides.amount ?? session.amount;
    const currency = overrides.currency ?? session.currency;
    if (ok) this.intents.set(intentId, { amount, currency, refunded: 0 });
    const event = {
      id: id('evt'), object: 'event', type: ok ? 'payment_intent.succeeded' : 'payment_intent.payment_failed', livemode: false,
      created: Math.floor(this.nowSeconds()),
      data: {
        object: {
          id: intentId, object: 'payment_intent', amount, amount_received: ok ? amount : 0, currency, metadata: session.metadata,
          status: ok ? 'succeeded' : 'requires_payment_method',
          last_payment_error: ok ? null : { code: 'card_declined', message: 'Your card was declined.' },
        },
      },
    };
    const payload = JSON.stringify(event);
    const header = stripeWebhooks.generateTestHeaderString({ payload, secret: this.opts.webhookSecret, timestamp: Math.floor(this.nowSeconds()) });
    const res = await fetch(this.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return res.status;
  }

  private nowSeconds(): number {
    return this.opts.now ? this.opts.now() : Date.now() / 1000;
  }

  private routes(): void {
    const app = this.app;
    const stripeError = (reply: FastifyReply, status: number, type: string, message: string) => reply.code(status).send({ error: { type, message } });

    app.addHook('preHandler', async (request, reply) => {
      if (!request.url.startsWith('/v1/')) return;
      this.requests.push({
        method: request.method, path: request.url.split('?')[0],
        idempotencyKey: typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : null,
        form: (request.body as Record<string, string> | undefined) ?? {},
      });
      if (request.headers.authorization !== `Bearer ${this.opts.secretKey}`) return stripeError(reply, 401, 'invalid_request_error', 'Invalid API Key provided');
    });

    const once = <T>(key: unknown, make: () => T): T => {
      if (typeof key !== 'string') return make();
      if (!this.idempotent.has(key)) this.idempotent.set(key, make());
      return this.idempotent.get(key) as T;
    };

    app.post('/v1/checkout/sessions', async (request, reply) => {
      const form = request.body as Record<string, string>;
      const amount = Number(form['line_items[0][price_data][unit_amount]']);
      const currency = form['line_items[0][price_data][currency]'] ?? '';
      if (!Number.isSafeInteger(amount) || amount <= 0 || !currency) return stripeError(reply, 400, 'invalid_request_error', 'line_items[0][price_data] is invalid');
      return once(request.headers['idempotency-key'], () => {
        const session: Session = {
          id: id('cs'), amount, currency, metadata: under(form, 'payment_intent_data[metadata]'),
          success_url: form.success_url ?? '', cancel_url: form.cancel_url ?? '', payment_intent: null,
        };
        this.sessions.set(session.id, session);
        return {
          id: session.id, object: 'checkout.session', mode: 'payment', amount_total: amount, currency, livemode: false,
          metadata: under(form, 'metadata'), client_reference_id: form.client_reference_id ?? null, payment_status: 'unpaid',
          status: 'open', url: `${this.base}/pay/${session.id}`, success_url: session.success_url, cancel_url: session.cancel_url,
        };
      });
    });

    app.post('/v1/refunds', async (request, reply) => {
      const form = request.body as Record<string, string>;
      if (this.failRefunds) return stripeError(reply, 402, 'invalid_request_error', this.failRefunds);
      const intent = this.intents.get(form.payment_intent ?? '');
      if (!intent) return stripeError(reply, 404, 'invalid_request_error', `No such payment_intent: '${form.payment_intent}'`);
      const amount = form.amount ? Number(form.amount) : intent.amount - intent.refunded;
      if (!Number.isSafeInteger(amount) || amount <= 0 || amount > intent.amount - intent.refunded) {
        return stripeError(reply, 400, 'invalid_request_error', `Refund amount (${amount}) is greater than unrefunded amount on charge`);
      }
      return once(request.headers['idempotency-key'], () => {
        intent.refunded += amount;
        return { id: id('re'), object: 'refund', amount, currency: intent.currency, payment_intent: form.payment_intent, status: 'succeeded', metadata: under(form, 'metadata') };
      });
    });

    // The payment page a customer is sent to: plain HTML forms, no JavaScript.
    app.get<{ Params: { id: string } }>('/pay/:id', async (request, reply) => {
      const session = this.sessions.get(request.params.id);
      if (!session) return reply.code(404).type('text/plain').send('no such session');
      const amount = `${(session.amount / 100).toFixed(2)} ${session.currency.toUpperCase()}`;
      return reply.type('text/html').send(`<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>Test payment</title>
<h1>Test payment (local Stripe double)</h1><p>Invoice ${escapeHtml(session.metadata.invoice_number ?? '')}: <strong>${escapeHtml(amount)}</strong></p>
<form method="post" action="/pay/${escapeHtml(session.id)}/succeed"><button>Pay (test)</button></form>
<form method="post" action="/pay/${escapeHtml(session.id)}/decline"><button>Decline (test)</button></form>`);
    });
    app.post<{ Params: { id: string; outcome: string } }>('/pay/:id/:outcome', async (request, reply) => {
      const session = this.sessions.get(request.params.id);
      if (!session || !['succeed', 'decline'].includes(request.params.outcome)) return reply.code(404).type('text/plain').send('no such session');
      const status = await this.complete(session.id, request.params.outcome === 'succeed', {});
      const target = request.params.outcome === 'succeed' ? session.success_url : session.cancel_url;
      if (status >= 300 || !target) return reply.type('text/plain').send(`webhook answered ${status}`);
      return reply.redirect(target, 303);
    });
  }
}
