// Shared setup of the billing tests on real HTTP: a stack (panel process + platform on loopback) with its panel at
// `ams`, the Stripe double as the gateway's API (webhooks pointed at the platform) and a VpnProduct priced monthly; and
// the in-process platform of the webhook tests (inject, a Stripe gateway whose API calls go nowhere).
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../../../shared/clock.ts';
import type { ModulesConfig } from '../../../config.ts';
import { buildPlatformApp } from '../../../module/platform/app.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';
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

/** The webhook tests' platform: app (inject), admin token, a Stripe gateway and a VpnProduct priced 9.99 EUR monthly. */
export interface WebhookPlatform {
  platform: Platform;
  app: FastifyInstance;
  gateway: string;
  productUuid: string;
  /** The platform's data directory (its SQLite file, its secret box). */
  dataDir: string;
  api(method: string, url: string, payload?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** Opens it in a temp dir; the gateway's `api_base` is a closed loopback port, so its Stripe API calls fail fast. */
export async function openWebhookPlatform(opts: { modulesConfig: ModulesConfig; secretKey: string; webhookSecret: string; logger: Logger; clock?: Clock }): Promise<WebhookPlatform> {
  const dataDir = tempDir('stripe-webhooks');
  const platform = await Platform.open({ dataDir, modulesConfig: opts.modulesConfig, queueOptions: { pollMs: 20 }, moduleWatchMs: 0, clock: opts.clock, logger: opts.logger });
  const app = await buildPlatformApp({ platform });
  const token = (await platform.tokens.create('stripe test')).token;
  const api = async (method: string, url: string, payload?: unknown) => {
    const res = await app.inject({ method: method as 'GET', url: `/api/admin${url}`, payload: payload as string, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.body ? res.json() : null };
  };
  const productUuid = (await platform.products.create('VpnProduct', { server_location: 'ams', plan_type: 'basic', bandwidth: 10 })).uuid;
  assert.equal((await api('PUT', `/products/${productUuid}/prices/monthly`, { amount: '9.99', currency: 'EUR' })).status, 200);
  const created = await api('POST', '/modules/Payment/Stripe/instances', { label: 'Stripe', module_data: { secret_key: opts.secretKey, webhook_secret: opts.webhookSecret, api_base: 'http://127.0.0.1:9' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return {
    platform, app, gateway: created.body.uuid, productUuid, dataDir, api,
    async close() {
      await app.close();
      await platform.close();
      removeDir(dataDir);
    },
  };
}
