// Builds the e-mail of a platform event: the customer concerned, the facts the template may show, the one-time link of a
// freshly provisioned VpnProduct account, then the rendered subject and bodies.
import type { SendOrigin } from '../send-store.ts';
import { MESSAGE_EVENTS, type MessageEventName, type MessageTemplate } from './catalogue.ts';
import type { ConnectLinks } from './connect-link.ts';
import type { Recipient, RecipientDirectory } from './recipients.ts';
import { renderMessage, type RenderedMessage } from './render.ts';

/** What the composer needs besides the event. */
export interface ComposerDeps {
  recipients: RecipientDirectory;
  /** Null where no panel can be asked (no VpnProduct): the mail then points to the client area. */
  links: ConnectLinks | null;
  /** Shown in subjects and bodies (config `brand`). */
  brand: string;
  /** Link to the client area (config `client_area_url`), or null. */
  clientAreaUrl: string | null;
  /** The platform's public base URL (config `public_url`): prefixes the password reset path. */
  publicUrl: string;
}

/**
 * What an event's e-mail is made of, read from the platform's data: the template, its data, the recipient and what
 * caused it. Rendering it (`renderFacts`) needs only the views, so it may happen in the worker that sends the mail.
 */
export interface MessageFacts {
  template: MessageTemplate;
  data: Record<string, unknown>;
  to: string;
  origin: SendOrigin;
  /** Why no one-time link is in a "service completed" mail (for the module log), else null. */
  linkNote: string | null;
}

/** A composed e-mail and what caused it. */
export interface ComposedMail extends RenderedMessage, Omit<MessageFacts, 'template' | 'data'> {}

/** The nothing-to-send answer: no customer, no address. */
export interface Skipped {
  skipped: string;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export class MessageComposer {
  constructor(private readonly deps: ComposerDeps) {}

  /** The e-mail of `event` rendered from `<viewsDir>/notifications/`, or why none is sent. */
  async compose(event: MessageEventName, payload: Record<string, unknown>, viewsDir: string, signal?: AbortSignal): Promise<ComposedMail | Skipped> {
    const facts = await this.facts(event, payload, signal);
    return 'skipped' in facts ? facts : renderFacts(facts, viewsDir);
  }

  /** The facts of `event`'s e-mail (customers, services, a panel's one-time link), or why none is sent. */
  async facts(event: MessageEventName, payload: Record<string, unknown>, signal?: AbortSignal, withLink = true): Promise<MessageFacts | Skipped> {
    if (event === 'customer.password_reset') return this.passwordReset(payload);
    const template = MESSAGE_EVENTS[event];
    const serviceUuid = text(payload.service_uuid);
    const customerUuid = text(payload.customer_uuid);
    const recipient: Recipient | null = customerUuid ? await this.deps.recipients.ofCustomer(customerUuid) : serviceUuid ? await this.deps.recipients.ofService(serviceUuid) : null;
    if (!recipient) return { skipped: `no customer for ${serviceUuid ? `service ${serviceUuid}` : `invoice ${text(payload.invoice_uuid) ?? '?'}`}` };
    if (!recipient.email) return { skipped: `customer ${recipient.customer_uuid} has no e-mail address` };
    const service = serviceUuid ? await this.deps.recipients.service(serviceUuid) : null;
    // A suspension for non-payment was told by service.suspended_nonpayment (with the pay link): not twice.
    if (event === 'service.suspended' && service?.billing_state === 'suspended') return { skipped: 'suspended for non-payment: told by service.suspended_nonpayment' };
    let link: string | null = null;
    let linkNote: string | null = null;
    if (event === 'service.provisioned') {
      const panel = service?.panel ?? service?.panel_location ?? null;
      if (!service?.account_name || !panel) linkNote = 'the service has no panel account';
      else if (!withLink) linkNote = 'no SMTP server configured: the mail is only recorded, so no link is made';
      else if (!this.deps.links) linkNote = 'no panel can be asked for a link here';
      else {
        const answer = await this.deps.links.link(panel, service.account_name, signal);
        link = answer.url;
        if (answer.url === null) linkNote = answer.reason;
      }
    }
    const invoiceUuid = text(payload.invoice_uuid);
    const data = {
      brand: this.deps.brand,
      client_area_url: this.deps.clientAreaUrl,
      customer: { name: recipient.name, email: recipient.email },
      service,
      link,
      reason: text(payload.reason),
      invoice: invoiceUuid ? payload : null,
      // Where the customer pays the invoice (the client area's invoice page, after logging in).
      pay_url: invoiceUuid ? `${this.deps.publicUrl.replace(/\/+$/, '')}/client/invoices/${invoiceUuid}` : null,
      has_saved_method: event === 'invoice.renewal_created' && (await this.deps.recipients.hasSavedMethod(recipient.customer_uuid)),
      cancellation: event === 'service.cancelled' ? payload : null,
      usage: event === 'service.usage_warning' || event === 'service.usage_exceeded' ? payload : null,
    };
    return {
      template,
      data,
      to: recipient.email,
      linkNote,
      origin: { event, service_uuid: serviceUuid, invoice_uuid: invoiceUuid, customer_uuid: recipient.customer_uuid },
    };
  }

  /** The reset link (public URL + the signed path) to the customer's current address. */
  private async passwordReset(payload: Record<string, unknown>): Promise<MessageFacts | Skipped> {
    const customerUuid = text(payload.customer_uuid);
    const recipient = customerUuid ? await this.deps.recipients.ofCustomer(customerUuid) : null;
    const path = text(payload.reset_path);
    if (!recipient) return { skipped: `no customer ${customerUuid ?? '?'}` };
    if (!path || !path.startsWith('/')) return { skipped: 'the event has no reset path' };
    const link = `${this.deps.publicUrl.replace(/\/+$/, '')}${path}`;
    const data = { brand: this.deps.brand, customer: { name: recipient.name, email: recipient.email }, link, expires_at: text(payload.expires_at) };
    return {
      template: 'password-reset',
      data,
      to: recipient.email,
      linkNote: null,
      origin: { event: 'customer.password_reset', service_uuid: null, invoice_uuid: null, customer_uuid: recipient.customer_uuid },
    };
  }
}

/** The e-mail of `facts` rendered from `<viewsDir>/notifications/`. */
export function renderFacts(facts: MessageFacts, viewsDir: string): ComposedMail {
  const { template, data, ...rest } = facts;
  return { ...renderMessage(viewsDir, template, data), ...rest };
}
