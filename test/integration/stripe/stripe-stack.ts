// Shared setup of the billing tests on real HTTP: a stack (panel process + platform on loopback) with its panel at
// `ams`, the Stripe double as the gateway's API (webhooks pointed at the platform) and a VpnProduct priced monthly.
import assert from 'node:assert/strict';
import { admin, type JsonAnswer } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, type Stack } from '../../fixtures/platform/setup.ts';
import { startStripeDouble, type StripeDouble } from '../../helpers/stripe-double.ts';

export interface StripeStack {
  stack: Stack;
  double: StripeDouble;
  /** The Stripe gateway instance's uuid. */
  gateway: string;
  /** A VpnProduct (ams, basic) priced 12.34 EUR monthly. */
  product: string;
  /** The admin API with the stack's token. */
  api(method: string, path: string, body?: unknown): Promise<JsonAnswer<any>>;
  close(): Promise<void>;
}

/** Starts the stack and the double, creates the gateway and the priced product; closes what started if a step fails. */
export async function startStripeStack(keys: { secretKey: string; webhookSecret: string }): Promise<StripeStack> {
  const stack = await startStack();
  let double: StripeDouble | null = null;
  const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);
  try {
    await registerPanel(stack);
    const started = await startStripeDouble(keys);
    double = started.double;
    const gw = await api('POST', '/modules/Payment/Stripe/instances', { label: 'Stripe (double)', module_data: { secret_key: keys.secretKey, webhook_secret: keys.webhookSecret, api_base: started.url } });
    assert.equal(gw.status, 201, JSON.stringify(gw.body));
    const gateway = gw.body.uuid as string;
    double.webhookUrl = `${stack.platform.url}/webhooks/payment/${gateway}`;
    const res = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'ams', plan_type: 'basic', bandwidth: 10 } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const product = res.body.uuid as string;
    await api('PUT', `/products/${product}/prices/monthly`, { amount: '12.34', currency: 'EUR' });
    const opened = double;
    return {
      stack, double: opened, gateway, product, api,
      async close() {
        await opened.close();
        await stack.close();
      },
    };
  } catch (error) {
    await double?.close();
    await stack.close();
    throw error;
  }
}
