// Payment modules: payment form, settings page, signed gateway webhooks dispatched by `type`, success/failure/refund.
import type { ModuleRequest, ModuleResponse } from './http.ts';
import { isModuleResponse } from './http.ts';
import { Module } from './module.ts';
import type { MaybePromise, PlatformContext } from './platform-context.ts';
import { JOB_ERRORS } from './result.ts';
import { sanitizeInput } from './validation.ts';

/** The invoice members a payment form uses. */
export interface Invoice {
  uuid: string;
  number: string;
  /** Amount still due. */
  dueAmount(): number;
  /** The client's currency code, e.g. `EUR`. */
  currency: string;
}

/** What a gateway payment session is created from. */
export interface PaymentSession {
  reference_id: string;
  invoice_id: string;
  description: string;
  amount: number;
  currency: string;
  return_url: string;
  cancel_url: string;
}

/** A gateway callback; `type` selects the handler. */
export type WebhookPayload = Record<string, unknown> & { type?: unknown };

/** The spec's Events table: callback `type` → handler. Any other type (or none) answers `ok`. */
const PAYMENT_EVENT_HANDLERS = {
  'payment_intent.succeeded': 'onPaymentSuccess',
  'payment_intent.payment_failed': 'onPaymentFailed',
} as const satisfies Record<string, 'onPaymentSuccess' | 'onPaymentFailed'>;

/** Body `ok`, status 200: the answer to unhandled callbacks and GET verification. */
const WEBHOOK_OK: Readonly<ModuleResponse> = Object.freeze({ status: 200, body: 'ok' });
const INVALID_SIGNATURE = 'Invalid signature';

/** The callback payload of a request body (JSON text is parsed; anything else becomes {}). */
function webhookPayload(body: unknown): WebhookPayload {
  let value = body;
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(value.toString());
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as WebhookPayload) : {};
}

/**
 * A Payment module. Subclasses render the payment form and settings page (which must show a generated
 * `webhook_url`), verify gateway signatures in `verifyWebhook` and record outcomes in onPaymentSuccess/onPaymentFailed.
 */
export abstract class Payment extends Module {
  constructor(ctx: PlatformContext) {
    super(ctx, 'Payment');
  }

  /** Sanitized gateway configuration (keys, secrets, webhook secret, sandbox flag); kept as `module_data`. */
  getModuleData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const clean = sanitizeInput(data);
    if ('sandbox' in clean) clean.sandbox = clean.sandbox === true || clean.sandbox === 'true' || clean.sandbox === '1' || clean.sandbox === 1 || clean.sandbox === 'on';
    this.module_data = clean;
    return clean;
  }

  /** HTML of the payment form or session for `data.invoice`. */
  abstract getClientAreaHtml(data: { invoice: Invoice; [key: string]: unknown }): MaybePromise<string>;

  /** HTML of the gateway settings page; must provide the generated `webhook_url`. */
  abstract getSettingsPage(data?: Record<string, unknown>): MaybePromise<string>;

  /** Checks the gateway signature of a callback (raw body in `request.rawBody`). Runs before any handler. */
  protected abstract verifyWebhook(request: ModuleRequest): MaybePromise<boolean>;

  /** Marks the invoice paid and logs the transaction. */
  abstract onPaymentSuccess(payload: WebhookPayload): MaybePromise<unknown>;

  /** Records the failure. */
  abstract onPaymentFailed(payload: WebhookPayload): MaybePromise<unknown>;

  /** POST callback: signature check (400 `Invalid signature` when it fails), then dispatch by `type`. */
  async apiWebhookPost(request: ModuleRequest): Promise<ModuleResponse> {
    let verified = false;
    try {
      verified = (await this.verifyWebhook(request)) === true;
    } catch (error) {
      this.logError('webhook', { reason: 'signature check threw' }, error);
    }
    if (!verified) {
      this.logError('webhook', { reason: 'invalid signature' }, []);
      return { status: 400, body: INVALID_SIGNATURE };
    }
    return this.dispatchWebhook(webhookPayload(request.body));
  }

  /** GET verification: body `ok`, status 200. */
  async apiWebhookGet(_request: ModuleRequest): Promise<ModuleResponse> {
    return { ...WEBHOOK_OK };
  }

  /** Calls the handler the payload's `type` selects (PAYMENT_EVENT_HANDLERS); unknown types answer `ok`. */
  async dispatchWebhook(payload: WebhookPayload): Promise<ModuleResponse> {
    const type = typeof payload.type === 'string' ? payload.type : null;
    const handler = type !== null && Object.hasOwn(PAYMENT_EVENT_HANDLERS, type) ? PAYMENT_EVENT_HANDLERS[type as keyof typeof PAYMENT_EVENT_HANDLERS] : null;
    if (!handler) {
      this.logDebug('webhook', { type }, 'ignored');
      return { ...WEBHOOK_OK };
    }
    try {
      const out = await this[handler](payload);
      this.logInfo('webhook', { type }, { handler });
      if (out === undefined) return { ...WEBHOOK_OK };
      return isModuleResponse(out) ? out : { status: 200, body: out };
    } catch (error) {
      this.logError('webhook', { type, handler }, error);
      return { status: 500, body: { status: 'error', message: JOB_ERRORS.unexpected } };
    }
  }

  /** Refunds `amount` of a transaction; gateways without refunds keep this default. */
  async refund(_transactionId: string, _amount: number): Promise<Record<string, unknown>> {
    return { status: 'error', message: 'Refunds are not supported' };
  }

  /**
   * Charges a saved payment method off-session for an invoice (recurring billing, on its due date). The gateway's
   * own confirmation (a signed webhook) settles the invoice; the answer only tells whether the gateway accepted the
   * charge. Must be idempotent per invoice. Gateways that cannot keep this default.
   */
  async chargeSaved(_charge: OffSessionCharge): Promise<ChargeAnswer> {
    return { status: 'failed', code: 'unsupported', message: OFF_SESSION_UNSUPPORTED };
  }

  /** Forgets a saved payment method at the gateway (the customer removed it); default: nothing to do. */
  async detachMethod(_method: SavedMethodRef): Promise<void> {}
}

const OFF_SESSION_UNSUPPORTED = 'This gateway cannot charge saved payment methods';

/** A saved payment method as the gateway knows it. */
export interface SavedMethodRef {
  uuid: string;
  /** The gateway's customer and payment method ids. */
  external_customer: string;
  external_id: string;
  label: string;
}

/** An off-session charge of a saved method for an invoice. */
export interface OffSessionCharge {
  invoice: Invoice;
  amount_minor: number;
  currency: string;
  description: string;
  method: SavedMethodRef;
}

/**
 * The gateway's answer to an off-session charge: `succeeded` / `processing` (the webhook settles the invoice) or
 * `failed` with the gateway's code (`card_declined`, `authentication_required`, …) and message.
 */
export interface ChargeAnswer {
  status: 'succeeded' | 'processing' | 'failed';
  code?: string;
  message?: string;
  /** The gateway's payment id (PaymentIntent). */
  external_id?: string;
}

/** An invoice as the platform's ledger shows it to a gateway (amounts in the currency's minor unit). */
export interface LedgerInvoice {
  uuid: string;
  number: string;
  description: string;
  customer_uuid: string | null;
  amount_minor: number;
  currency: string;
  status: 'unpaid' | 'paid' | 'failed' | 'refunded' | 'void';
  refunded_minor: number;
  /** True for invoices of a service's billing (a card paid with them is saved for the renewals). */
  recurring: boolean;
}

/** A recorded transaction (payment, failed attempt or refund) of an invoice. */
export interface LedgerTransaction {
  uuid: string;
  invoice_uuid: string;
  kind: 'payment' | 'failure' | 'refund';
  gateway: string;
  gateway_uuid: string | null;
  /** The gateway's id (e.g. a PaymentIntent id). */
  external_id: string | null;
  amount_minor: number;
  currency: string;
  refunded_minor: number;
}

/** A gateway's report of money received (or of a failed attempt): one event id, handled once per gateway. */
export interface GatewayPayment {
  /** The Payment module's name, e.g. `Stripe`. */
  gateway: string;
  gateway_uuid: string;
  event_id: string;
  event_type: string;
  /** From the payment's metadata; null when the gateway sent none. */
  invoice_uuid: string | null;
  amount_minor: number;
  /** ISO 4217, any case. */
  currency: string;
  /** The gateway's payment id (PaymentIntent id). */
  external_id: string;
}

export interface GatewayFailure extends GatewayPayment {
  /** The gateway's failure text (never a secret). */
  reason: string;
  /** The gateway's failure code (`card_declined`, `authentication_required`, …), when it gives one. */
  code?: string;
  /** The failed payment was an off-session charge of a saved method (recurring billing). */
  auto_charge?: boolean;
}

/** A payment method the gateway saved for later off-session charges. */
export interface SavedMethod {
  customer_uuid: string;
  gateway_uuid: string;
  gateway: string;
  external_customer: string;
  external_id: string;
  label: string;
  brand?: string | null;
  last4?: string | null;
  exp_month?: number | null;
  exp_year?: number | null;
}

/**
 * What recording did: `paid` (invoice paid, service creation queued), `duplicate` (event id seen before: nothing
 * changed), `mismatch` (amount or currency differ: recorded as a failure), `unknown_invoice`, `already_paid` (money
 * recorded against an invoice no longer payable, matching or not: nothing else changed), `failed` (a failed attempt
 * recorded), `not_payable` (a failed attempt for an invoice no longer payable: recorded, nothing else changed, no event).
 */
export type PaymentOutcome = 'paid' | 'duplicate' | 'mismatch' | 'unknown_invoice' | 'already_paid' | 'failed' | 'not_payable';

export interface LedgerAnswer {
  outcome: PaymentOutcome;
  invoice_uuid: string | null;
  transaction_uuid: string | null;
}

/** A refund the gateway accepted. */
export interface GatewayRefund {
  transaction_uuid: string;
  amount_minor: number;
  /** The gateway's refund id. */
  external_id: string | null;
}

export interface RefundAnswer {
  invoice_uuid: string;
  refund_uuid: string;
  /** Total refunded of the invoice so far (minor units). */
  refunded_minor: number;
  /** True when the whole invoice is now refunded (status `refunded`). */
  full: boolean;
  /** What the product's refund policy queued for the service on a full refund (`termination`, `suspend`) or null. */
  service_action: string | null;
}

/**
 * The platform's invoice ledger as Payment modules reach it (`this.ctx.billing`): invoices and transactions to match
 * gateway events against, and the recording calls, each atomic (the event id is claimed in the same transaction).
 */
export interface PaymentLedger {
  invoice(uuid: string): Promise<LedgerInvoice | null>;
  transaction(uuid: string): Promise<LedgerTransaction | null>;
  recordPayment(payment: GatewayPayment): Promise<LedgerAnswer>;
  recordFailure(failure: GatewayFailure): Promise<LedgerAnswer>;
  /** Records a refund of `transaction_uuid`; throws when it exceeds what is left to refund. */
  recordRefund(refund: GatewayRefund): Promise<RefundAnswer>;
  /** The gateway's customer id of a platform customer (null when none was made yet). */
  gatewayCustomer(gatewayUuid: string, customerUuid: string): Promise<string | null>;
  /** Remembers it; answers the id kept (the first one when two requests raced). */
  setGatewayCustomer(gatewayUuid: string, customerUuid: string, externalId: string): Promise<string>;
  /** Saves (or replaces) the customer's payment method on this gateway, for the renewals' off-session charges. */
  saveMethod(method: SavedMethod): Promise<void>;
}
