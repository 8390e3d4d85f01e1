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
  /** Null when customer credit paid the whole invoice (gateway `credit`). */
  transaction_uuid: string | null;
  /** `manual`, `credit`, or the Payment module's name, e.g. `Stripe`. */
  gateway: string;
}

/** Payload of the recurring-billing events about one invoice of a service (renewal, reminder, dunning). */
export interface BillingInvoiceEvent extends InvoiceEvent {
  /** The service's billing state after the event (`active`, `overdue`, `suspended`, …). */
  billing_state?: string;
  /** The period a renewal invoice pays for, `[period_start, period_end)`. */
  period_start?: string | null;
  period_end?: string | null;
  /** Reminders: days before (`when: before`) or after (`after`) the due date; dunning events: days overdue. */
  days?: number;
  when?: 'before' | 'after';
  /** `service.overdue`: the day the service will be suspended when still unpaid (null: never). */
  suspend_on?: string | null;
  /** `service.renewed`: the new next due date. */
  next_due_date?: string | null;
}

/** Payload of `payment.auto_charge_failed`: the off-session charge of a saved method was refused. */
export interface AutoChargeFailedEvent extends InvoiceEvent {
  /** The Payment module, e.g. `Stripe`. */
  gateway: string;
  /** The gateway's code: `card_declined`, `authentication_required`, … */
  code: string;
  reason: string;
}

/** Payload of `service.cancelled` / `service.cancellation_undone`. */
export interface CancellationEvent {
  service_uuid: string;
  product_uuid: string | null;
  module: string;
  customer_uuid: string | null;
  /** `period_end` (the service runs until its paid time ends) or `immediate`. */
  when: 'period_end' | 'immediate';
  /** The day the service ends (ISO date). */
  effective_date: string;
  /** Who asked: `customer` or `admin`. */
  by: string;
  at: string;
}

/** Payload of `service.plan_changed`: a prorated change_package applied (on payment of its invoice, or at once). */
export interface PlanChangedEvent {
  service_uuid: string;
  product_uuid: string;
  from_product_uuid: string;
  module: string;
  customer_uuid: string | null;
  /** Prorated balance: positive was invoiced (`invoice_uuid`), negative credited to the customer. */
  balance_minor: number;
  currency: string;
  invoice_uuid: string | null;
  at: string;
}

/** Payload of `payment.method_saved` / `payment.method_removed`. */
export interface PaymentMethodEvent {
  customer_uuid: string;
  service_uuid: null;
  method_uuid: string;
  gateway: string;
  label: string;
  at: string;
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

/** Payload of the data-cap events (VpnProduct): a capped service used 80 % / 100 % of its period's allowance. */
export interface UsageEvent extends ServiceEvent {
  customer_uuid: string | null;
  used_bytes: number;
  allowance_bytes: number;
  /** The same in decimal units for people, e.g. `8.2 GB` of `10 GB`. */
  used: string;
  allowance: string;
  /** Share of the allowance used, 0-100 (whole percent, capped at 100). */
  percent: number;
  /** What happens at 100 %: `throttle` (to `throttle_mbit` Mbit/s) or `suspend`, until the period renews. */
  action: 'throttle' | 'suspend';
  throttle_mbit: number;
  /** The cap period `[period_start, period_end)` (ISO dates). */
  period_start: string;
  period_end: string;
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
  /** The billing run made the renewal invoice of a service's next period (the lead time before its due date). */
  'invoice.renewal_created': BillingInvoiceEvent;
  /** A reminder of an unpaid renewal invoice, before or after its due date (settings `reminder_days_*`). */
  'invoice.reminder': BillingInvoiceEvent;
  /** A renewal invoice went unpaid past its due date: billing state `overdue`. */
  'service.overdue': BillingInvoiceEvent;
  /** Billing suspended the service for non-payment (its suspend() job is queued). */
  'service.suspended_nonpayment': BillingInvoiceEvent;
  /** Every overdue invoice is paid: billing unsuspends the service it suspended (unsuspend() queued). */
  'service.unsuspended_payment': BillingInvoiceEvent;
  /** Billing terminated the service for non-payment (terminate() queued, the unpaid invoice voided). */
  'service.terminated_nonpayment': BillingInvoiceEvent;
  /** A renewal was paid: the service is paid through `next_due_date`. */
  'service.renewed': BillingInvoiceEvent;
  /** A cancellation was asked for (at the period end, or at once). */
  'service.cancelled': CancellationEvent;
  /** An admin withdrew a pending cancellation: the service renews again. */
  'service.cancellation_undone': CancellationEvent;
  /** A prorated plan change was applied. */
  'service.plan_changed': PlanChangedEvent;
  /** The off-session charge of a saved payment method failed (declined, authentication required); the invoice stays open. */
  'payment.auto_charge_failed': AutoChargeFailedEvent;
  /** A customer's payment method was saved for later charges (their first card payment). */
  'payment.method_saved': PaymentMethodEvent;
  /** A saved payment method was removed. */
  'payment.method_removed': PaymentMethodEvent;
  /** A capped service used 80 % of its period's data allowance (once per period). */
  'service.usage_warning': UsageEvent;
  /** A capped service used its whole allowance: its plan's action (throttle or suspend) is queued (once per period). */
  'service.usage_exceeded': UsageEvent;
}

export type HookEventName = keyof HookEvents;
export type Hooks = EventBus<HookEvents>;

/** The service lifecycle's events (the provisioning jobs'). */
export const HOOK_EVENTS = [
  'service.created',
  'service.provisioned',
  'service.failed',
  'service.suspended',
  'service.unsuspended',
  'service.terminated',
  'service.package_changed',
] as const satisfies readonly HookEventName[];
export type ServiceEventName = (typeof HOOK_EVENTS)[number];

/** The billing events (orders, invoices, payments, refunds). */
export const INVOICE_EVENTS = ['invoice.created', 'invoice.paid', 'invoice.payment_failed', 'invoice.refunded'] as const satisfies readonly HookEventName[];
export type InvoiceEventName = (typeof INVOICE_EVENTS)[number];

/** The recurring-billing events (renewals, dunning, cancellations, plan changes, saved payment methods). */
export const BILLING_EVENTS = [
  'invoice.renewal_created', 'invoice.reminder', 'service.overdue', 'service.suspended_nonpayment', 'service.unsuspended_payment',
  'service.terminated_nonpayment', 'service.renewed', 'service.cancelled', 'service.cancellation_undone', 'service.plan_changed',
  'payment.auto_charge_failed', 'payment.method_saved', 'payment.method_removed',
] as const satisfies readonly HookEventName[];
export type BillingEventName = (typeof BILLING_EVENTS)[number];

/** Billing events logged at `warn`. */
const WARN_EVENTS = new Set<string>(['invoice.payment_failed', 'service.suspended_nonpayment', 'service.terminated_nonpayment', 'payment.auto_charge_failed']);

/** The default listener: one structured log line per service event (`warn` for failures). */
export function registerDefaultListeners(hooks: Hooks, logger: Logger): void {
  for (const event of HOOK_EVENTS) {
    hooks.on(event, (payload) => {
      if (event === 'service.failed') logger.warn({ event, ...payload }, 'service event');
      else logger.info({ event, ...payload }, 'service event');
    });
  }
  for (const event of [...INVOICE_EVENTS, ...BILLING_EVENTS]) {
    hooks.on(event, (payload) => {
      if (WARN_EVENTS.has(event)) logger.warn({ event, ...payload }, 'billing event');
      else logger.info({ event, ...payload }, 'billing event');
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
