// A local stand-in for Stripe's API (test mode of the demo, and the tests' double): Checkout Sessions (saving the card
// for off-session use when asked), Customers, PaymentMethods, off-session PaymentIntents and Refunds over the library's
// wire format, a payment page whose buttons send signed PaymentIntent events (the library's test-header helper and the
// endpoint's signing secret) to the gateway's webhook URL. Never charges anything.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { stripeWebhooks } from './client.ts';
import {
  chargeOffSession, doubleId as id, methodObject, TEST_CARDS, type DoubleCustomer, type DoubleMethod, type Reply, type TestCard,
} from './local-double-cards.ts';

export { TEST_CARDS, type TestCard } from './local-double-cards.ts';

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
  /** The Stripe customer the card is saved on (`setup_future_usage: off_session`), or null. */
  customer: string | null;
  setup: boolean;
}

/** An event the double sent (kept for replays). */
export interface SentEvent {
  id: string;
  type: string;
  payload: string;
  status: number;
}

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
  readonly customers = new Map<string, DoubleCustomer>();
  readonly methods = new Map<string, DoubleMethod>();
  /** Every event sent to the webhook, in order. */
  readonly events: SentEvent[] = [];
  private readonly sending = new Set<Promise<unknown>>();
  /** When set, `POST /v1/refunds` answers this Stripe error (status 402). */
  failRefunds: string | null = null;
  webhookUrl: string | null;
  private readonly app: FastifyInstance;
  private readonly idempotent = new Map<string, unknown>();
  private readonly replies = new Map<string, Reply>();
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

  /**
   * Pays a session as a customer would: a signed `payment_intent.succeeded`; resolves with the webhook's status. `card`
   * is the test card used (and saved when the session asked): how it behaves in later off-session charges.
   */
  pay(sessionId: string, overrides: { amount?: number; currency?: string; card?: TestCard } = {}): Promise<number> {
    return this.complete(sessionId, true, overrides);
  }

  /** Sends a sent event again, freshly signed (Stripe's retries and a replay look like this); resolves with the status. */
  async replay(eventId: string): Promise<number> {
    const event = this.events.find((e) => e.id === eventId);
    if (!event) throw new Error(`no such event: ${eventId}`);
    return this.post(event.payload);
  }

  /** Resolves when every webhook the double is sending has been answered. */
  async settled(): Promise<void> {
    while (this.sending.size > 0) await Promise.allSettled([...this.sending]);
  }

  /** Declines a session: a signed `payment_intent.payment_failed`. */
  decline(sessionId: string): Promise<number> {
    return this.complete(sessionId, false, {});
  }

  private async complete(sessionId: string, ok: boolean, overrides: { amount?: number; currency?: string; card?: TestCard }): Promise<number> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no such session: ${sessionId}`);
    const intentId = session.payment_intent ?? id('pi');
    session.payment_intent = intentId;
    const amount = overrides.amount ?? session.amount;
    const currency = overrides.currency ?? session.currency;
    let method: DoubleMethod | null = null;
    if (ok) {
      this.intents.set(intentId, { amount, currency, refunded: 0 });
      method = { id: id('pm'), customer: session.setup ? session.customer : null, card: overrides.card ?? 'ok' };
      this.methods.set(method.id, method);
    }
    return this.send(ok ? 'payment_intent.succeeded' : 'payment_intent.payment_failed', {
      id: intentId, object: 'payment_intent', amount, amount_received: ok ? amount : 0, currency, metadata: session.metadata,
      customer: session.customer, payment_method: method?.id ?? null, setup_future_usage: session.setup ? 'off_session' : null,
      status: ok ? 'succeeded' : 'requires_payment_method',
      last_payment_error: ok ? null : { code: 'card_declined', message: 'Your card was declined.' },
    });
  }

  /** Sends a signed event of `intent` to the webhook; resolves with the webhook's status. */
  private async send(type: string, intent: Record<string, unknown>): Promise<number> {
    const event = { id: id('evt'), object: 'event', type, livemode: false, created: Math.floor(this.nowSeconds()), data: { object: intent } };
    const payload = JSON.stringify(event);
    const sent: SentEvent = { id: event.id, type, payload, status: 0 };
    this.events.push(sent);
    sent.status = await this.post(payload);
    return sent.status;
  }

  private async post(payload: string): Promise<number> {
    if (!this.webhookUrl) throw new Error('the double has no webhook URL');
    const header = stripeWebhooks.generateTestHeaderString({ payload, secret: this.opts.webhookSecret, timestamp: Math.floor(this.nowSeconds()) });
    const res = await fetch(this.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return res.status;
  }

  /** Sends an event after the current request is answered (as Stripe does), tracked by `settled()`. */
  private sendLater(type: string, intent: Record<string, unknown>): void {
    const sending: Promise<unknown> = new Promise((resolve) => setImmediate(resolve)).then(() => this.send(type, intent)).catch(() => undefined)
      .finally(() => this.sending.delete(sending));
    this.sending.add(sending);
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
        const customer = form.customer && this.customers.has(form.customer) ? form.customer : null;
        const session: Session = {
          id: id('cs'), amount, currency, metadata: under(form, 'payment_intent_data[metadata]'),
          success_url: form.success_url ?? '', cancel_url: form.cancel_url ?? '', payment_intent: null,
          customer, setup: customer !== null && form['payment_intent_data[setup_future_usage]'] === 'off_session',
        };
        this.sessions.set(session.id, session);
        return {
          id: session.id, object: 'checkout.session', mode: 'payment', amount_total: amount, currency, livemode: false,
          metadata: under(form, 'metadata'), client_reference_id: form.client_reference_id ?? null, payment_status: 'unpaid',
          status: 'open', url: `${this.base}/pay/${session.id}`, success_url: session.success_url, cancel_url: session.cancel_url,
        };
      });
    });

    // The settings page's "test the keys": any authenticated read (the key check above refuses a wrong key).
    app.get('/v1/balance', async () => ({ object: 'balance', livemode: false, available: [{ amount: 0, currency: 'eur' }], pending: [] }));

    app.post('/v1/customers', async (request) => {
      const form = request.body as Record<string, string>;
      return once(request.headers['idempotency-key'], () => {
        const customer: DoubleCustomer = { id: id('cus'), email: form.email ?? null, metadata: under(form, 'metadata') };
        this.customers.set(customer.id, customer);
        return { ...customer, object: 'customer', name: form.name ?? null };
      });
    });

    app.get<{ Params: { id: string } }>('/v1/payment_methods/:id', async (request, reply) => {
      const method = this.methods.get(request.params.id);
      if (!method) return stripeError(reply, 404, 'invalid_request_error', `No such PaymentMethod: '${request.params.id}'`);
      return methodObject(method);
    });

    app.post<{ Params: { id: string } }>('/v1/payment_methods/:id/detach', async (request, reply) => {
      const method = this.methods.get(request.params.id);
      if (!method) return stripeError(reply, 404, 'invalid_request_error', `No such PaymentMethod: '${request.params.id}'`);
      method.customer = null;
      return methodObject(method);
    });

    // An off-session charge of a saved card: answered (and its webhook sent) once per idempotency key.
    app.post('/v1/payment_intents', async (request, reply) => {
      const form = request.body as Record<string, string>;
      const key = request.headers['idempotency-key'];
      const cached = typeof key === 'string' ? this.replies.get(key) : undefined;
      if (cached) return reply.code(cached.status).send(cached.body);
      const outcome = chargeOffSession(form, this.methods, under(form, 'metadata'));
      if (typeof key === 'string') this.replies.set(key, outcome.reply);
      if (outcome.event) {
        if (outcome.event.type === 'payment_intent.succeeded') this.intents.set(String(outcome.event.intent.id), { amount: Number(form.amount), currency: form.currency ?? '', refunded: 0 });
        this.sendLater(outcome.event.type, outcome.event.intent);
      }
      return reply.code(outcome.reply.status).send(outcome.reply.body);
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
<form method="post" action="/pay/${escapeHtml(session.id)}/succeed">${session.setup ? `<p>The card is saved for the renewals. Test card:</p>
${Object.entries(TEST_CARDS).map(([key, card], i) => `<label><input type="radio" name="card" value="${key}"${i === 0 ? ' checked' : ''}> ${card.brand} •••• ${card.last4} (${key === 'ok' ? 'renewals succeed' : key === 'decline_later' ? 'renewals are declined' : 'renewals need authentication'})</label><br>`).join('\n')}` : ''}
<button>Pay (test)</button></form>
<form method="post" action="/pay/${escapeHtml(session.id)}/decline"><button>Decline (test)</button></form>`);
    });
    app.post<{ Params: { id: string; outcome: string } }>('/pay/:id/:outcome', async (request, reply) => {
      const session = this.sessions.get(request.params.id);
      if (!session || !['succeed', 'decline'].includes(request.params.outcome)) return reply.code(404).type('text/plain').send('no such session');
      const card = (request.body as Record<string, string> | undefined)?.card;
      const status = await this.complete(session.id, request.params.outcome === 'succeed', { card: card && Object.hasOwn(TEST_CARDS, card) ? (card as TestCard) : 'ok' });
      const target = request.params.outcome === 'succeed' ? session.success_url : session.cancel_url;
      if (status >= 300 || !target) return reply.type('text/plain').send(`webhook answered ${status}`);
      return reply.redirect(target, 303);
    });
  }
}
