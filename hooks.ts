// Platform event listeners (the spec's hooks.php): the typed service events, their default logging listener, the bus.
import type { Logger } from 'pino';
import { EventBus } from './module/contract/event-bus.ts';
import type { ProvisionAction } from './module/contract/provision-status.ts';

/** Common payload of every service event. */
export interface ServiceEvent {
  service_uuid: string;
  product_uuid?: string | null;
  /** Name of the Product module handling the service, e.g. `VpnProduct`. */
  module: string;
  /** Why it happened (failure text, admin note); never a secret. */
  reason?: string;
  /** ISO timestamp from the platform clock. */
  at: string;
}

/** Payload of `service.failed`: which action failed and why. */
export interface ServiceFailedEvent extends ServiceEvent {
  action: ProvisionAction;
  reason: string;
}

/**
 * Payload of the invoice events (billing): who owes what. Amounts are given both in the currency's minor unit
 * (`amount_minor`, e.g. cents) and as a decimal text (`amount`, e.g. `9.99`); never a card or gateway secret.
 */
export interface InvoiceEvent {
  invoice_uuid: string;
  /** Human invoice number, e.g. `INV-2026-000001`. */
  invoice_number: string;
  customer_uuid: string | null;
  /** The service the invoice pays for (null for an invoice without one). */
  service_uuid: string | null;
  /** The product ordered and the Product module serving it (null without a service). */
  product_uuid: string | null;
  module: string | null;
  amount: string;
  amount_minor: number;
  /** ISO 4217 code, upper case, e.g. `EUR`. */
  currency: string;
  /** Due date (ISO date, `YYYY-MM-DD`). */
  due_date: string;
  /** Failure text (`invoice.payment_failed`) or refund note; never a secret. */
  reason?: string;
  /** ISO timestamp from the platform clock. */
  at: string;
}

/** Payload of `invoice.paid`: the transaction that paid it and through which gateway. */
export interface InvoicePaidEvent extends InvoiceEvent {
  transaction_uuid: string;
  /** `manual`, or the Payment module's name, e.g. `Stripe`. */
  gateway: string;
}

/** Payload of `invoice.refunded`: how much of it went back (minor units) and whether all of it did. */
export interface InvoiceRefundedEvent extends InvoiceEvent {
  refunded_minor: number;
  full: boolean;
}

/** Payload of `customer.password_reset`: a customer asked for a reset link (a Notification listener mails it). */
export interface PasswordResetEvent {
  customer_uuid: string;
  /** No service is involved (kept so every event has the service members). */
  service_uuid: null;
  product_uuid: null;
  module: null;
  email: string;
  /** Path of the reset page with its signed token (prefix it with the platform's public URL). */
  reset_path: string;
  expires_at: string;
  at: string;
}

/** Event name → payload. */
export interface HookEvents {
  /** An order (or an admin) created an unpaid invoice. */
  'invoice.created': InvoiceEvent;
  /** The invoice was paid (gateway or manual payment); the service's `create()` is queued. */
  'invoice.paid': InvoicePaidEvent;
  /** A payment attempt failed, or a gateway answered an amount/currency that does not match the invoice. */
  'invoice.payment_failed': InvoiceEvent;
  /** A refund (partial or full) of a paid invoice was recorded. */
  'invoice.refunded': InvoiceRefundedEvent;
  /** `create()` accepted the service: status `processing`, `createJob` queued. */
  'service.created': ServiceEvent;
  /** `createJob` succeeded: status `completed`, provision data stored. */
  'service.provisioned': ServiceEvent;
  /** A job failed for good (last try, or a throw reaching maxExceptions); status `failed` for create/suspend, unchanged otherwise. */
  'service.failed': ServiceFailedEvent;
  /** `suspendJob` succeeded: status `suspended`. */
  'service.suspended': ServiceEvent;
  /** `unsuspendJob` succeeded: status `completed`. */
  'service.unsuspended': ServiceEvent;
  /** `terminationJob` succeeded: status `terminated`. */
  'service.terminated': ServiceEvent;
  /** `change_packageJob` succeeded: status unchanged, the service runs on its new package. */
  'service.package_changed': ServiceEvent;
  /** A customer asked for a password reset link (the web host); never logged with its token. */
  'customer.password_reset': PasswordResetEvent;
}

export type HookEventName = keyof HookEvents;
/** The service lifecycle's events (`service.*`). */
export type ServiceEventName = Extract<HookEventName, `service.${string}`>;
export type InvoiceEventName = Extract<HookEventName, `invoice.${string}`>;
export type Hooks = EventBus<HookEvents>;

export const HOOK_EVENTS: readonly ServiceEventName[] = [
  'service.created',
  'service.provisioned',
  'service.failed',
  'service.suspended',
  'service.unsuspended',
  'service.terminated',
  'service.package_changed',
];

/** The billing events (orders, invoices, payments, refunds). */
export const INVOICE_EVENTS: readonly InvoiceEventName[] = ['invoice.created', 'invoice.paid', 'invoice.payment_failed', 'invoice.refunded'];

/** The default listener: one structured log line per service event (`warn` for failures). */
export function registerDefaultListeners(hooks: Hooks, logger: Logger): void {
  for (const event of HOOK_EVENTS) {
    hooks.on(event, (payload) => {
      if (event === 'service.failed') logger.warn({ event, ...payload }, 'service event');
      else logger.info({ event, ...payload }, 'service event');
    });
  }
  for (const event of INVOICE_EVENTS) {
    hooks.on(event, (payload) => {
      if (event === 'invoice.payment_failed') logger.warn({ event, ...payload }, 'invoice event');
      else logger.info({ event, ...payload }, 'invoice event');
    });
  }
}

/** A bus whose listener failures are logged, with the default listeners registered; plugins add theirs. */
export function createHooks(logger: Logger): Hooks {
  const hooks: Hooks = new EventBus<HookEvents>((event, error) => {
    logger.error({ event, err: error instanceof Error ? error.message : String(error) }, 'hook listener failed');
  });
  registerDefaultListeners(hooks, logger);
  return hooks;
}
