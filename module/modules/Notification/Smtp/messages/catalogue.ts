// Which platform events become which e-mail: event → template under views/notifications/ and its subject line.
import type { HookEventName } from '../../../../../hooks.ts';

/** Templates (each has `<name>.text.hbs` and `<name>.html.hbs` under views/notifications/). */
export const MESSAGE_TEMPLATES = [
  'service-completed', 'service-suspended', 'service-unsuspended', 'service-terminated',
  'invoice-created', 'payment-received', 'payment-failed', 'password-reset',
  'invoice-renewal', 'invoice-reminder', 'service-overdue', 'service-suspended-nonpayment', 'card-declined', 'service-cancelled',
  'usage-warning', 'usage-exceeded',
] as const;
export type MessageTemplate = (typeof MESSAGE_TEMPLATES)[number];

/** The events a customer is told about, and the template of each. */
export const MESSAGE_EVENTS = {
  'service.provisioned': 'service-completed',
  'service.suspended': 'service-suspended',
  'service.unsuspended': 'service-unsuspended',
  'service.terminated': 'service-terminated',
  'invoice.created': 'invoice-created',
  'invoice.paid': 'payment-received',
  'invoice.payment_failed': 'payment-failed',
  'customer.password_reset': 'password-reset',
  'invoice.renewal_created': 'invoice-renewal',
  'invoice.reminder': 'invoice-reminder',
  'service.overdue': 'service-overdue',
  'service.suspended_nonpayment': 'service-suspended-nonpayment',
  'payment.auto_charge_failed': 'card-declined',
  'service.cancelled': 'service-cancelled',
  'service.usage_warning': 'usage-warning',
  'service.usage_exceeded': 'usage-exceeded',
} as const satisfies Partial<Record<HookEventName, MessageTemplate>>;

export type MessageEventName = keyof typeof MESSAGE_EVENTS;

/** Subject lines (handlebars, rendered with the template data; plain text, never HTML-escaped). */
export const MESSAGE_SUBJECTS: Record<MessageTemplate, string> = {
  'service-completed': 'Your {{brand}} VPN is ready: how to connect',
  'service-suspended': 'Your {{brand}} VPN has been suspended',
  'service-unsuspended': 'Your {{brand}} VPN is active again',
  'service-terminated': 'Your {{brand}} VPN has been terminated',
  'invoice-created': 'Invoice {{invoice.invoice_number}}: {{invoice.amount}} {{invoice.currency}} due {{invoice.due_date}}',
  'payment-received': 'Payment received for invoice {{invoice.invoice_number}}',
  'payment-failed': 'Payment failed for invoice {{invoice.invoice_number}}',
  'password-reset': 'Reset your {{brand}} password',
  'invoice-renewal': 'Renewal invoice {{invoice.invoice_number}}: {{invoice.amount}} {{invoice.currency}} due {{invoice.due_date}}',
  'invoice-reminder': '{{#if (eq invoice.when "before")}}Reminder: invoice {{invoice.invoice_number}} is due {{invoice.due_date}}{{else}}Reminder: invoice {{invoice.invoice_number}} is overdue{{/if}}',
  'service-overdue': 'Invoice {{invoice.invoice_number}} is overdue: pay it to keep your {{brand}} VPN',
  'service-suspended-nonpayment': 'Your {{brand}} VPN is suspended: invoice {{invoice.invoice_number}} is unpaid',
  'card-declined': 'Your card was not charged for invoice {{invoice.invoice_number}}: please pay it',
  'service-cancelled': 'Your {{brand}} VPN is cancelled',
  'usage-warning': 'Your {{brand}} VPN has used {{usage.percent}}% of its data allowance',
  'usage-exceeded': 'Your {{brand}} VPN has used its whole data allowance',
};

/**
 * Members of an event payload that are secrets (the signed reset token in `reset_path`): the listener moves them into
 * the job's third argument under a secret-named key, so the task store seals them and its listing shows `[redacted]`.
 */
export const SECRET_MEMBERS: Partial<Record<MessageEventName, readonly string[]>> = {
  'customer.password_reset': ['reset_path'],
};

export function isMessageEvent(event: string): event is MessageEventName {
  return Object.hasOwn(MESSAGE_EVENTS, event);
}
