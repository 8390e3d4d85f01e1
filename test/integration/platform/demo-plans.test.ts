// The demo's plans (bin/cli/demo-plans.ts) on a platform with a panel: made once with names, prices and caps; the
// unnamed sample product of an older demo becomes the first plan (same uuid, its services kept); a provider's
// renamed plan is not made again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEMO_PLANS, seedDemoPlans } from '../../../bin/cli/demo-plans.ts';
import { admin } from '../../fixtures/platform/http.ts';
import { registerPanel, startStack, type Stack } from '../../fixtures/platform/setup.ts';

let stack: Stack;
const api = (method: string, path: string, body?: unknown) => admin(stack.platform.url, stack.token, method, path, body);

before(async () => {
  stack = await startStack();
  await registerPanel(stack, 'local');
});

after(async () => {
  await stack?.close();
});

/** name → `cap action rate: prices` of every product. */
async function listing(): Promise<Record<string, string>> {
  const platform = stack.platform.platform;
  return Object.fromEntries(await Promise.all((await platform.products.list()).map(async (p) => {
    const prices = (await platform.billing.listPrices(p.uuid)).map((x) => `${x.amount} ${x.currency} ${x.billing_cycle}`).sort().join(', ');
    return [p.name || '(unnamed)', `${p.product_data.data_cap_gb} ${p.product_data.cap_action} ${p.product_data.cap_throttle_mbit}: ${prices}`];
  })));
}

test('an older demo\'s unnamed product becomes VPN Basic (uuid and service kept, its price kept); VPN Premium is added; a second seed changes nothing', async () => {
  const legacy = await api('POST', '/products', { module: 'VpnProduct', product_data: { server_location: 'local', plan_type: 'basic', bandwidth: 100 } });
  assert.equal(legacy.status, 201);
  await stack.platform.platform.billing.setPrice(legacy.body.uuid, 'monthly', '5.00', 'EUR');
  const service = await api('POST', '/services', { product_uuid: legacy.body.uuid, service_data: { username: 'old_demo' } });
  assert.equal(service.status, 201);

  const first = await seedDemoPlans(stack.platform.platform, 'local');
  assert.equal(first.uuid, legacy.body.uuid, 'the sample product keeps its uuid');
  assert.equal(first.name, 'VPN Basic');
  assert.deepEqual(await listing(), {
    'VPN Basic': '50 throttle 5: 5.00 EUR monthly, 50.00 EUR annually',
    'VPN Premium': '500 throttle 20: 9.00 EUR monthly, 90.00 EUR annually',
  });
  assert.equal((await api('GET', `/services/${service.body.uuid}`)).body.product_uuid, legacy.body.uuid);
  assert.deepEqual((await stack.platform.platform.products.list()).map((p) => p.description), DEMO_PLANS.map((p) => p.description));

  const before = await listing();
  assert.equal((await seedDemoPlans(stack.platform.platform, 'local')).uuid, first.uuid);
  assert.deepEqual(await listing(), before, 'a second start makes nothing');

  // The provider renames the first plan: the demo does not make a second "VPN Basic".
  const renamed = await api('PATCH', `/products/${first.uuid}`, { name: 'Starter' });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  await seedDemoPlans(stack.platform.platform, 'local');
  assert.deepEqual(Object.keys(await listing()).sort(), ['Starter', 'VPN Premium']);
});
