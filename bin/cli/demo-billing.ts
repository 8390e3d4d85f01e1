// The demo's money path: a Stripe gateway pointed at the local Stripe double (or at Stripe itself when test keys are
// given), a price for the sample product, and one demo order whose invoice (paid from the client area) the banner shows.
import type { Platform } from '../../module/platform/platform.ts';
import { StripeLocalDouble } from '../../module/modules/Payment/Stripe/local-double.ts';

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
    const existing = admin.listInstances('Payment', 'Stripe').find((i) => i.label === GATEWAY_LABEL);
    const gateway = existing ? admin.updateInstance(existing.uuid, { module_data: moduleData }) : admin.createInstance('Payment', 'Stripe', GATEWAY_LABEL, moduleData);
    if (double) double.webhookUrl = `${platformUrl}/webhooks/payment/${gateway.uuid}`;
    const billing = platform.billing;
    if (!billing.listPrices(productUuid).length) billing.setPrice(productUuid, 'monthly', '5.00', 'EUR');
    const customer = billing.customers.findByEmail(customerEmail) ?? billing.customers.create({ email: customerEmail, name: 'Demo customer' });
    // The demo order is made once: a restart shows the open invoice, or the paid one, and orders nothing again.
    const latest = (status?: 'unpaid' | 'failed') => billing.listInvoices({ customer: customer.uuid, status }, 1, 1).invoices[0];
    const invoice = latest('unpaid') ?? latest('failed') ?? latest() ?? (await billing.order({
      customer_uuid: customer.uuid, product_uuid: productUuid, billing_cycle: 'monthly',
      service_data: { username: `demo_paid_${Math.floor(platform.clock.now().getTime() / 1000) % 100_000}` },
    })).invoice;
    // The payment page opens from the invoice in the client area (a Checkout Session is made then, not at start).
    const pay = invoice.status === 'unpaid' || invoice.status === 'failed'
      ? `pay it in the client area\n    (log in as the customer below): ${platformUrl}/client/invoices/${invoice.uuid}`
      : `it is ${invoice.status}; order another in the client area`;
    const banner = `Billing (${double ? 'local Stripe double: test mode, nothing is charged' : 'Stripe test keys from the environment'})
  webhook URL:  ${platformUrl}/webhooks/payment/${gateway.uuid}
  invoice ${invoice.number} (${invoice.amount} ${invoice.currency}, ${invoice.status}) of ${customerEmail}: ${pay}
  paying queues the service's create(). With no SMTP channel set up, e-mails are not sent: the log names each one
  (never its text); the customer's one-time link is in the client area (Connect).

`;
    return { banner, close: async () => void (await double?.close()) };
  } catch (error) {
    await double?.close();
    throw error;
  }
}
