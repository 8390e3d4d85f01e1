// The demo's money path: a Stripe gateway pointed at the local Stripe double (or at Stripe itself when test keys are
// given), one demo order of the sample plan (priced by demo-plans.ts) whose invoice (paid from the client area) the banner shows,
// and a renewing plan: paid with a saved card, due today, renewed by the billing run and charged off-session.
import type { Platform } from '../../module/platform/platform.ts';
import { StripeLocalDouble } from '../../module/modules/Payment/Stripe/local-double.ts';
import { today } from '../../module/platform/services/billing/calendar.ts';

/** Fixed test values of the local double: not Stripe credentials, they only work against the double. */
export const DEMO_STRIPE_KEY = 'sk_test_vpnhost_local_double';
export const DEMO_WEBHOOK_SECRET = 'whsec_vpnhost_local_double_signing';
const GATEWAY_LABEL = 'Stripe (demo)';

export interface DemoBilling {
  banner: string;
  close(): Promise<void>;
}

/**
 * Sets up billing for the demo. With VPNHOST_STRIPE_SECRET_KEY and VPNHOST_STRIPE_WEBHOOK_SECRET (Stripe test keys)
 * the gateway talks to Stripe; otherwise a local double on VPNHOST_DEMO_STRIPE_LISTEN (default 127.0.0.1 on a free port)
 * stands in and signs its events with the demo secret.
 */
export async function startDemoBilling(platform: Platform, platformUrl: string, productUuid: string, customerEmail: string): Promise<DemoBilling> {
  const realKey = process.env.VPNHOST_STRIPE_SECRET_KEY;
  const realSecret = process.env.VPNHOST_STRIPE_WEBHOOK_SECRET;
  let double: StripeLocalDouble | null = null;
  let moduleData: Record<string, unknown>;
  if (realKey && realSecret) {
    moduleData = { secret_key: realKey, webhook_secret: realSecret };
  } else {
    double = new StripeLocalDouble({ secretKey: DEMO_STRIPE_KEY, webhookSecret: DEMO_WEBHOOK_SECRET });
    const [host, port] = (process.env.VPNHOST_DEMO_STRIPE_LISTEN ?? '127.0.0.1:0').split(':');
    if (host !== '127.0.0.1') throw new Error('VPNHOST_DEMO_STRIPE_LISTEN: the Stripe double listens on 127.0.0.1 only');
    moduleData = { secret_key: DEMO_STRIPE_KEY, webhook_secret: DEMO_WEBHOOK_SECRET, api_base: await double.listen(Number(port)) };
  }
  try {
    const admin = platform.moduleAdmin;
    const existing = (await admin.listInstances('Payment', 'Stripe')).find((i) => i.label === GATEWAY_LABEL);
    const gateway = existing ? await admin.updateInstance(existing.uuid, { module_data: moduleData }) : await admin.createInstance('Payment', 'Stripe', GATEWAY_LABEL, moduleData);
    if (double) double.webhookUrl = `${platformUrl}/webhooks/payment/${gateway.uuid}`;
    const billing = platform.billing;
    const customer = (await billing.customers.findByEmail(customerEmail)) ?? (await billing.customers.create({ email: customerEmail, name: 'Demo customer' }));
    // The demo order is made once: a restart shows the open invoice, or the paid one, and orders nothing again.
    // (The renewing plan below has invoices of its own: they are not the demo order's.)
    const renewing = await renewingService(platform, customer.uuid);
    const latest = async (status?: 'unpaid' | 'failed') =>
      (await billing.listInvoices({ customer: customer.uuid, status }, 1, 20)).invoices.find((i) => !renewing || i.service_uuid !== renewing);
    const invoice = (await latest('unpaid')) ?? (await latest('failed')) ?? (await latest()) ?? (await billing.order({
      customer_uuid: customer.uuid, product_uuid: productUuid, billing_cycle: 'monthly',
      service_data: { username: `demo_paid_${Math.floor(platform.clock.now().getTime() / 1000) % 100_000}` },
    })).invoice;
    // The payment page opens from the invoice in the client area (a Checkout Session is made then, not at start).
    const pay = invoice.status === 'unpaid' || invoice.status === 'failed'
      ? `pay it in the client area\n    (log in as the customer below): ${platformUrl}/client/invoices/${invoice.uuid}`
      : `it is ${invoice.status}; order another in the client area`;
    const renewingLines = double ? await renewingPlan(platform, double, gateway.uuid, customer.uuid, productUuid, platformUrl) : '';
    const banner = `Billing (${double ? 'local Stripe double: test mode, nothing is charged' : 'Stripe test keys from the environment'})
  webhook URL:  ${platformUrl}/webhooks/payment/${gateway.uuid}
  invoice ${invoice.number} (${invoice.amount} ${invoice.currency}, ${invoice.status}) of ${customerEmail}: ${pay}
  paying queues the service's create(). With no SMTP channel set up, e-mails are not sent: the log names each one
  (never its text); the customer's one-time link is in the client area (Connect).
${renewingLines}
`;
    return { banner, close: async () => void (await double?.close()) };
  } catch (error) {
    await double?.close();
    throw error;
  }
}

const RENEWING_USERNAME = 'demo_renew';

/** The demo customer's renewing plan, once made. */
async function renewingService(platform: Platform, customer: string): Promise<string | null> {
  for (const uuid of await platform.billing.customers.serviceUuids(customer)) {
    if ((await platform.serviceAdmin.describe(uuid)).service_data.username === RENEWING_USERNAME) return uuid;
  }
  return null;
}

/**
 * The renewing plan of the demo customer (made on first start): ordered monthly and paid on the double's Checkout with a
 * card saved for the renewals, its next due date moved to today, then a billing run: the renewal invoice is made and
 * charged off-session, and the signed webhook pays it. Answers the banner lines (the plan as it is on later starts).
 */
async function renewingPlan(platform: Platform, double: StripeLocalDouble, gateway: string, customer: string, product: string, platformUrl: string): Promise<string> {
  const { billing, recurring } = platform;
  let service = await renewingService(platform, customer);
  if (!service) {
    const order = await billing.order({ customer_uuid: customer, product_uuid: product, billing_cycle: 'monthly', service_data: { username: RENEWING_USERNAME } });
    const html = await billing.paymentHtml(order.invoice.uuid, gateway, { return_url: `${platformUrl}/client`, cancel_url: `${platformUrl}/client` });
    const session = /\/pay\/(cs_test_[0-9a-f]+)/.exec(html)?.[1];
    if (!session) return '  (the renewing plan could not be set up: no Checkout session)\n';
    await double.pay(session, { card: 'ok' });
    service = order.service_uuid;
    await recurring.setNextDue(service, today(platform.clock));
    await recurring.runNow(platform.queue, 30_000);
    const renewal = async () => (await billing.listInvoices({ service: service! }, 1, 10)).invoices.find((i) => i.kind === 'renewal');
    for (let i = 0; i < 100 && (await renewal())?.status !== 'paid'; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const view = await recurring.service(service);
  const renewal = (await billing.listInvoices({ service }, 1, 10)).invoices.find((i) => i.kind === 'renewal');
  const card = (await recurring.methods.list(customer))[0]?.label ?? 'no saved card';
  return `  renewing plan: service ${service} (${view.recurring} ${view.currency} ${view.billing_cycle}), billing ${view.state}, paid through ${view.next_due_date}
    ${renewal ? `renewal invoice ${renewal.number} (${renewal.period_start} to ${renewal.period_end}) charged to the saved card (${card}): ${renewal.status}` : 'no renewal yet'}
    the billing run is scheduled every ${(await recurring.settings()).run_every_minutes} min; what the next one would do:
      node bin/vpnhost.js platform billing run --dry-run --data <data>/platform   (or POST /api/admin/billing/run {"dry_run":true})
`;
}
