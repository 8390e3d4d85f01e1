// The Stripe Payment module: Checkout Sessions for invoices (minor units, idempotency key = invoice uuid), signed
// webhooks verified with the library (300 s tolerance either way, platform clock) before anything else, PaymentIntent events
// recorded once through the platform ledger, refunds through Stripe's Refunds API.
import type { ModuleRequest, ModuleResponse } from '../../../contract/http.ts';
import { Payment, type ChargeAnswer, type Invoice, type OffSessionCharge, type PaymentLedger, type SavedMethodRef, type WebhookPayload } from '../../../contract/payment.ts';
import { currencyExponent, formatMinor } from '../../../platform/services/billing/money.ts';
import { isCardError, stripeClient, stripeWebhooks, type StripeClient } from './client.ts';
import { failureOf, paymentOf, setupOf, signedAt } from './events.ts';
import { collectSecretValues, scrub } from '../../../contract/log.ts';
import { settingsSurface, type SettingsPageData, type SettingsTestResult } from '../../../contract/settings-page.ts';
import { settingsForm, type SettingsField } from '../../../contract/settings-form.ts';
import { keyMode, parseSettings, SIGNATURE_TOLERANCE_S, STRIPE_EVENTS, type StripeSettings } from './settings.ts';

const NO_LEDGER = 'the platform ledger is not available in this process';
const NOT_THIS_GATEWAY = (uuid: string) => `transaction ${uuid} was not paid through this gateway`;
const SIGNED_IN_FUTURE = (seconds: number) => `signature timestamp ${seconds} s ahead of the platform clock (tolerance ${SIGNATURE_TOLERANCE_S} s)`;
const DEFAULT_PUBLIC_URL = 'http://127.0.0.1:8090';
const STRIPE_SURFACE = settingsSurface('Payment', 'Stripe', 'Stripe');
/** The settings form's fields (module_data members). */
const STRIPE_FIELDS: readonly SettingsField[] = [
  { name: 'secret_key', label: 'Secret key', type: 'password', secret: true, help: 'sk_test_… or sk_live_… (Dashboard → Developers → API keys)' },
  { name: 'webhook_secret', label: 'Webhook signing secret', type: 'password', secret: true, help: 'whsec_… of the endpoint below' },
  { name: 'product_name', label: 'Name on the payment page', type: 'text', secret: false, help: 'Optional; default "Invoice"' },
  { name: 'api_base', label: 'API base URL', type: 'url', secret: false, help: 'Leave empty for Stripe; a local double in tests and the demo' },
];

export class Stripe extends Payment {
  static override version = '1.0.0';

  #client: StripeClient | null = null;

  /** Sanitizes and checks the gateway settings (secret key, webhook signing secret, optional API base URL). */
  override getModuleData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const clean = super.getModuleData(data);
    const settings = parseSettings(clean);
    this.module_data = { ...settings };
    return this.module_data;
  }

  /**
   * The settings page: the generated `webhook_url` of this gateway (on the platform's base URL as the admin reached it),
   * the events to enable, the key's mode and, on the platform's settings page, the form (secrets blank: a blank field
   * keeps them) with each field's errors and the "test the keys" button.
   */
  override getSettingsPage(data: Partial<SettingsPageData> = {}): string {
    const base = String(data.base_url ?? this.config<string>('public_url') ?? DEFAULT_PUBLIC_URL).replace(/\/+$/, '');
    const secret = typeof this.module_data.secret_key === 'string' ? this.module_data.secret_key : '';
    return this.view('settings', {
      webhook_url: this.payment_gateway_uuid ? `${base}/webhooks/payment/${this.payment_gateway_uuid}` : null,
      events: STRIPE_EVENTS,
      mode: secret ? keyMode(secret) : null,
      api_base: this.module_data.api_base ?? null,
      has_webhook_secret: typeof this.module_data.webhook_secret === 'string',
      form: data.action ? settingsForm(data as SettingsPageData, STRIPE_FIELDS) : null,
    });
  }

  /** "Test the keys": one authenticated read of Stripe's API (the balance) with the saved secret key. */
  async testSettings(_input: Record<string, unknown> = {}): Promise<SettingsTestResult> {
    try {
      await this.client().balance.retrieve();
      return { ok: true, message: `Stripe accepted the secret key (${keyMode(this.settings().secret_key)} mode).` };
    } catch (error) {
      const secrets = collectSecretValues({ m: this.module_data });
      this.logError('testSettings', {}, String(scrub((error as Error).message, secrets)));
      return { ok: false, message: `Stripe refused the key: ${String(scrub((error as Error).message, secrets))}` };
    }
  }

  /** The settings page's permission key, sidebar entry and the route it links through. */
  adminPermissions() {
    return [STRIPE_SURFACE.permission];
  }

  adminWebRoutes() {
    return [STRIPE_SURFACE.route];
  }

  adminSidebar() {
    return [STRIPE_SURFACE.sidebar];
  }

  /** The sidebar link's controller: on to the platform's settings page of this module. */
  settingsLink(): ModuleResponse {
    return STRIPE_SURFACE.redirect;
  }

  /**
   * Creates (or, for the same invoice, gets back: idempotency key = invoice uuid) a Checkout Session for the amount due
   * in the currency's minor unit, the invoice in the metadata of the session and of its PaymentIntent; renders the
   * link to Stripe's payment page (no JavaScript needed).
   */
  override async getClientAreaHtml(data: { invoice: Invoice; [key: string]: unknown }): Promise<string> {
    const { invoice } = data;
    const minor = Math.round(invoice.dueAmount() * 10 ** currencyExponent(invoice.currency));
    const shown = { number: invoice.number, amount: formatMinor(minor, invoice.currency), currency: invoice.currency };
    if (minor <= 0) return this.view('client_area.checkout', { ...shown, nothing_due: true });
    const settings = this.settings();
    const metadata = { invoice_uuid: invoice.uuid, invoice_number: invoice.number, gateway_uuid: this.payment_gateway_uuid ?? '' };
    const customer = data.customer as { uuid?: string; email?: string; name?: string } | null | undefined;
    try {
      // A service's invoice: the card is saved (off-session) on the customer's Stripe customer for the renewals.
      const stripeCustomer = data.save_method === true && customer?.uuid ? await this.stripeCustomer(customer as { uuid: string; email?: string; name?: string }) : null;
      const session = await this.client().checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [{
            quantity: 1,
            price_data: { currency: invoice.currency.toLowerCase(), unit_amount: minor, product_data: { name: `${settings.product_name ?? 'Invoice'} ${invoice.number}` } },
          }],
          success_url: String(data.return_url ?? ''),
          cancel_url: String(data.cancel_url ?? ''),
          client_reference_id: invoice.uuid,
          ...(stripeCustomer ? { customer: stripeCustomer } : customer?.email ? { customer_email: customer.email } : {}),
          metadata,
          payment_intent_data: stripeCustomer ? { metadata, setup_future_usage: 'off_session' } : { metadata },
        },
        { idempotencyKey: invoice.uuid },
      );
      this.logInfo('getClientAreaHtml', { invoice_uuid: invoice.uuid, amount_minor: minor, currency: invoice.currency }, { session: session.id });
      return this.view('client_area.checkout', { ...shown, url: session.url, test_mode: keyMode(settings.secret_key) === 'test' });
    } catch (error) {
      this.logError('getClientAreaHtml', { invoice_uuid: invoice.uuid }, error);
      return this.view('client_area.checkout', { ...shown, error: 'The payment page could not be opened. Please try again later.' });
    }
  }

  /**
   * `Stripe-Signature` over the exact raw body, with the webhook signing secret, its timestamp within 300 s of the
   * platform clock either way (the library refuses only the old side; a throw names the reason in the module log).
   */
  protected override verifyWebhook(request: ModuleRequest): boolean {
    const header = request.headers['stripe-signature'];
    const raw = request.rawBody;
    const secret = this.module_data.webhook_secret;
    if (typeof header !== 'string' || raw === undefined || raw.length === 0 || typeof secret !== 'string' || !secret) return false;
    const nowMs = this.ctx.clock.now().getTime();
    stripeWebhooks.constructEvent(raw, header, secret, SIGNATURE_TOLERANCE_S, undefined, nowMs);
    const ahead = signedAt(header) - Math.floor(nowMs / 1000);
    if (ahead > SIGNATURE_TOLERANCE_S) throw new Error(SIGNED_IN_FUTURE(ahead));
    return true;
  }

  /** Records the PaymentIntent against its invoice (once per event id); a mismatch is recorded as a failure. */
  override async onPaymentSuccess(payload: WebhookPayload): Promise<ModuleResponse> {
    const payment = paymentOf(payload, { name: this.module_name, uuid: this.payment_gateway_uuid ?? '' });
    if (!payment.event_id) return { status: 400, body: 'event id missing' };
    const answer = await this.ledger().recordPayment(payment);
    const setup = setupOf(payload);
    if (setup && payment.invoice_uuid && (answer.outcome === 'paid' || answer.outcome === 'already_paid')) await this.saveMethod(payment.invoice_uuid, setup);
    const request = { event_id: payment.event_id, invoice_uuid: payment.invoice_uuid, amount_minor: payment.amount_minor, currency: payment.currency };
    if (answer.outcome === 'paid' || answer.outcome === 'duplicate') this.logInfo('onPaymentSuccess', request, answer);
    else this.logError('onPaymentSuccess', request, answer);
    return { status: 200, body: { received: true, outcome: answer.outcome } };
  }

  /** Records the failed attempt (once per event id). */
  override async onPaymentFailed(payload: WebhookPayload): Promise<ModuleResponse> {
    const failure = failureOf(payload, { name: this.module_name, uuid: this.payment_gateway_uuid ?? '' });
    if (!failure.event_id) return { status: 400, body: 'event id missing' };
    const answer = await this.ledger().recordFailure(failure);
    this.logInfo('onPaymentFailed', { event_id: failure.event_id, invoice_uuid: failure.invoice_uuid, reason: failure.reason }, answer);
    return { status: 200, body: { received: true, outcome: answer.outcome } };
  }

  /**
   * Refunds `amount` (major units, the payment's currency) of a payment of this gateway through Stripe's Refunds API,
   * then records it; when Stripe refuses, nothing is recorded and the error is answered.
   */
  override async refund(transactionId: string, amount: number): Promise<Record<string, unknown>> {
    const ledger = this.ledger();
    const payment = await ledger.transaction(transactionId);
    if (!payment || payment.kind !== 'payment' || payment.gateway_uuid !== this.payment_gateway_uuid || !payment.external_id) {
      return { status: 'error', message: NOT_THIS_GATEWAY(transactionId) };
    }
    const minor = Math.round(amount * 10 ** currencyExponent(payment.currency));
    let refund;
    try {
      refund = await this.client().refunds.create(
        { payment_intent: payment.external_id, amount: minor, metadata: { transaction_uuid: payment.uuid } },
        { idempotencyKey: `refund-${payment.uuid}-${payment.refunded_minor}-${minor}` },
      );
    } catch (error) {
      this.logError('refund', { transaction_uuid: payment.uuid, amount_minor: minor }, error);
      return { status: 'error', message: (error as Error).message };
    }
    if (refund.status === 'failed' || refund.status === 'canceled') {
      this.logError('refund', { transaction_uuid: payment.uuid, amount_minor: minor }, { refund: refund.id, status: refund.status });
      return { status: 'error', message: `Stripe refund ${refund.id} ${refund.status}` };
    }
    const recorded = await ledger.recordRefund({ transaction_uuid: payment.uuid, amount_minor: minor, external_id: refund.id });
    this.logInfo('refund', { transaction_uuid: payment.uuid, amount_minor: minor }, { refund: refund.id, ...recorded });
    return { status: 'success', stripe_refund: refund.id, ...recorded };
  }

  /**
   * Charges the saved card off-session (a PaymentIntent confirmed at once, idempotency key per invoice: a retry is the
   * same charge). A decline or a required authentication answers `failed` with Stripe's code; Stripe's webhook settles
   * a success. Other errors (network, Stripe down) throw, for the job to try again.
   */
  override async chargeSaved(charge: OffSessionCharge): Promise<ChargeAnswer> {
    const { invoice } = charge;
    const metadata = { invoice_uuid: invoice.uuid, invoice_number: invoice.number, gateway_uuid: this.payment_gateway_uuid ?? '', auto_charge: '1' };
    try {
      const intent = await this.client().paymentIntents.create({
        amount: charge.amount_minor, currency: charge.currency.toLowerCase(), customer: charge.method.external_customer, payment_method: charge.method.external_id,
        off_session: true, confirm: true, description: charge.description.slice(0, 300), metadata,
      }, { idempotencyKey: `charge-${invoice.uuid}` });
      this.logInfo('chargeSaved', { invoice_uuid: invoice.uuid, amount_minor: charge.amount_minor }, { intent: intent.id, status: intent.status });
      if (intent.status === 'succeeded') return { status: 'succeeded', external_id: intent.id };
      if (intent.status === 'processing') return { status: 'processing', external_id: intent.id };
      return { status: 'failed', code: intent.status, message: `the payment is ${intent.status}`, external_id: intent.id };
    } catch (error) {
      if (!isCardError(error)) throw error;
      const code = error.code ?? 'card_error';
      this.logInfo('chargeSaved', { invoice_uuid: invoice.uuid, amount_minor: charge.amount_minor }, { status: 'failed', code });
      return { status: 'failed', code, message: error.message, external_id: error.payment_intent?.id };
    }
  }

  /** Detaches a removed card from its Stripe customer. */
  override async detachMethod(method: SavedMethodRef): Promise<void> {
    await this.client().paymentMethods.detach(method.external_id);
  }

  /** The Stripe customer of a platform customer: the one made before, or a new one (idempotent per customer). */
  private async stripeCustomer(customer: { uuid: string; email?: string; name?: string }): Promise<string> {
    const ledger = this.ledger();
    const gateway = this.payment_gateway_uuid ?? '';
    const known = await ledger.gatewayCustomer(gateway, customer.uuid);
    if (known) return known;
    const made = await this.client().customers.create(
      { ...(customer.email ? { email: customer.email } : {}), ...(customer.name ? { name: customer.name } : {}), metadata: { customer_uuid: customer.uuid } },
      { idempotencyKey: `customer-${gateway}-${customer.uuid}` },
    );
    return ledger.setGatewayCustomer(gateway, customer.uuid, made.id);
  }

  /** Saves the card a paid invoice set up, with its brand, last 4 digits and expiry (read from Stripe). */
  private async saveMethod(invoiceUuid: string, setup: { customer: string; payment_method: string }): Promise<void> {
    const ledger = this.ledger();
    const owner = (await ledger.invoice(invoiceUuid))?.customer_uuid;
    if (!owner) return;
    let card: { brand?: string; last4?: string; exp_month?: number; exp_year?: number } = {};
    try {
      card = (await this.client().paymentMethods.retrieve(setup.payment_method)).card ?? {};
    } catch (error) {
      this.logError('saveMethod', { invoice_uuid: invoiceUuid }, error);
    }
    const label = card.brand && card.last4 ? `${card.brand} •••• ${card.last4}` : 'card';
    await ledger.saveMethod({
      customer_uuid: owner, gateway_uuid: this.payment_gateway_uuid ?? '', gateway: this.module_name, external_customer: setup.customer,
      external_id: setup.payment_method, label, brand: card.brand ?? null, last4: card.last4 ?? null, exp_month: card.exp_month ?? null, exp_year: card.exp_year ?? null,
    });
  }

  private settings(): StripeSettings {
    return parseSettings(this.module_data);
  }

  private client(): StripeClient {
    this.#client ??= stripeClient(this.settings());
    return this.#client;
  }

  private ledger(): PaymentLedger {
    const ledger = this.ctx.billing;
    if (!ledger) throw new Error(NO_LEDGER);
    return ledger;
  }
}
