// The demo's plans: named, described, priced and capped VpnProduct plans on the demo's panel location, made on the
// first start (a restart finds them and leaves the provider's edits alone); the unnamed sample product of an older
// demo becomes the first plan, keeping its uuid and services.
import type { Platform } from '../../module/platform/platform.ts';
import type { BillingCycle } from '../../module/platform/services/billing/schema.ts';
import type { ProductRecord } from '../../module/platform/store/query/repositories/products.ts';

interface DemoPlan {
  name: string;
  description: string;
  product_data: Record<string, unknown>;
  prices: Array<[BillingCycle, string]>;
}

const CURRENCY = 'EUR';

/** What a provider trying the demo sees on the order page, in this order. */
export const DEMO_PLANS: readonly DemoPlan[] = [
  {
    name: 'VPN Basic',
    description: 'WireGuard and IKEv2, 100 Mbit/s. 50 GB a month; after that 5 Mbit/s until the month renews.',
    product_data: { plan_type: 'basic', bandwidth: 100, data_cap_gb: 50, cap_action: 'throttle', cap_throttle_mbit: 5 },
    prices: [['monthly', '5.00'], ['annually', '50.00']],
  },
  {
    name: 'VPN Premium',
    description: 'WireGuard and IKEv2, 300 Mbit/s. 500 GB a month; after that 20 Mbit/s until the month renews.',
    product_data: { plan_type: 'premium', bandwidth: 300, data_cap_gb: 500, cap_action: 'throttle', cap_throttle_mbit: 20 },
    prices: [['monthly', '9.00'], ['annually', '90.00']],
  },
];

/**
 * Makes the demo's plans on `location` once and answers the first (the demo's sample product). With products already
 * there, only an unnamed one of an older demo is turned into the first plan and the missing plans are added by name;
 * named products are never changed.
 */
export async function seedDemoPlans(platform: Platform, location: string): Promise<ProductRecord> {
  const existing = await platform.products.list();
  const legacy = existing.find((p) => !p.name && p.module === 'VpnProduct') ?? null;
  if (existing.length > 0 && !legacy) return existing.find((p) => p.name === DEMO_PLANS[0].name) ?? existing[0];
  for (const [index, plan] of DEMO_PLANS.entries()) {
    if (existing.some((p) => p.name === plan.name)) continue;
    const listing = { name: plan.name, description: plan.description, position: index + 1, visible: true };
    const data = { server_location: location, ...plan.product_data };
    const product = index === 0 && legacy
      ? await platform.catalogue.updateProduct(legacy.uuid, { ...legacy.product_data, ...data }, listing)
      : await platform.catalogue.createProduct('VpnProduct', data, listing);
    const priced = new Set((await platform.billing.listPrices(product.uuid)).map((p) => p.billing_cycle));
    for (const [cycle, amount] of plan.prices) if (!priced.has(cycle)) await platform.billing.setPrice(product.uuid, cycle, amount, CURRENCY);
  }
  const products = await platform.products.list();
  return products.find((p) => p.name === DEMO_PLANS[0].name) ?? products[0];
}
