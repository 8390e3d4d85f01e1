// The admin product form's model: the listing (name, description, position, visible), the module's own fields
// (getProductData; a field with a fixed set of values is a select box) and a price per billing cycle, each with the
// messages of one 422 error bag (the listing's, the module's saveProductData's and the prices').
import { z } from 'zod';
import type { Product } from '../../../contract/product.ts';
import { HttpError } from '../../errors.ts';
import { normalizeCurrency, toMinor } from '../../services/billing/money.ts';
import { BILLING_CYCLES, REFUND_ACTIONS, type BillingCycle, type RefundAction } from '../../services/billing/schema.ts';
import type { ProductRecord } from '../../store/query/repositories/products.ts';
import type { WebDeps } from '../web-deps.ts';
import { formFields, type FormField } from './form-errors.ts';
import { panelHealth } from './panels-page.ts';

export const LISTING_FIELDS = ['name', 'description', 'position', 'visible'] as const;
export const CURRENCY_FIELD = 'currency';
export const REFUND_FIELD = 'refund_action';
export const priceField = (cycle: BillingCycle) => `price_${cycle}`;

export interface ModuleField extends FormField {
  /** The values a select box offers; null for a text input. */
  options: Array<{ value: string; selected: boolean }> | null;
}

/** The Product module instance of `moduleName` (404 when none is loaded). */
export function productModule(deps: Pick<WebDeps, 'modules'>, moduleName: string): Product {
  if (!deps.modules.has('Product', moduleName)) throw new HttpError(404, `unknown module: ${moduleName}`);
  return deps.modules.instance<Product>('Product', moduleName);
}

/** The inner schema of preprocess pipes, optional, nullable and default wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema as z.ZodType & { def: { type: string; out?: z.ZodType; innerType?: z.ZodType } };
  for (let i = 0; i < 8; i++) {
    const def = current.def;
    const next = def.type === 'pipe' ? def.out : ['optional', 'nullable', 'default', 'prefault'].includes(def.type) ? def.innerType : undefined;
    if (!next) break;
    current = next as typeof current;
  }
  return current;
}

/**
 * The fixed values of each module field: the enum options of the module's product schema, and for `server_location`
 * the locations of the panels the platform knows (the modules that manage panels).
 */
export async function fieldChoices(deps: Pick<WebDeps, 'modules' | 'logger'>, module: Product): Promise<Record<string, string[]>> {
  const choices: Record<string, string[]> = {};
  const schemaFn = (module as unknown as { productSchema?: () => z.ZodType }).productSchema;
  const schema = typeof schemaFn === 'function' ? schemaFn.call(module) : null;
  if (schema instanceof z.ZodObject) {
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const inner = unwrap(field);
      if (inner instanceof z.ZodEnum) choices[name] = (inner.options as unknown[]).map(String);
    }
  }
  const fields = Object.keys(module.getProductData({}));
  if (fields.includes('server_location')) {
    try {
      choices.server_location = [...new Set((await panelHealth(deps)).map((p) => p.location))].sort();
    } catch (error) {
      deps.logger.warn({ err: (error as Error).message }, 'product form: panel locations not read');
    }
  }
  return choices;
}

/** Module fields with their values, messages and (when fixed) options; a value not among them stays selectable. */
export function moduleFields(names: readonly string[], values: Record<string, unknown>, bag: Record<string, string[]> | null, choices: Record<string, string[]>): ModuleField[] {
  return formFields(names, values, bag).map((field) => {
    const list = choices[field.name];
    if (!list) return { ...field, options: null };
    const all = field.value && !list.includes(field.value) ? [...list, field.value] : list;
    return { ...field, options: [{ value: '', selected: field.value === '' }, ...all.map((value) => ({ value, selected: value === field.value }))] };
  });
}

/** The listing values of a stored product (or a new one's defaults) as form strings. */
export function listingValues(product: ProductRecord | null): Record<string, string> {
  return {
    name: product?.name ?? '', description: product?.description ?? '', position: String(product?.position ?? 0),
    visible: product && !product.visible ? '' : 'on',
  };
}

/** The price fields of a product: the amount per cycle and one currency. */
export async function priceValues(deps: Pick<WebDeps, 'billing'>, productUuid: string | null): Promise<Record<string, string>> {
  const out: Record<string, string> = { [CURRENCY_FIELD]: 'EUR', [REFUND_FIELD]: 'terminate' };
  if (!productUuid) return out;
  out[REFUND_FIELD] = (await deps.billing.refundPolicy(productUuid)).refund_action;
  for (const price of await deps.billing.listPrices(productUuid)) {
    out[priceField(price.billing_cycle)] = price.amount;
    out[CURRENCY_FIELD] = price.currency;
  }
  return out;
}

/** Per cycle: an amount to set, null to remove the price (field sent empty), undefined to leave it (field not sent). */
export type PricePlan = Array<{ cycle: BillingCycle; amount: string | null | undefined }>;

/** Checks the submitted prices: what to set (an empty amount removes the cycle's price) or the bag's messages. */
export function checkPrices(form: Record<string, string>): { plan: PricePlan; currency: string; refund: RefundAction | null; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  const refund = form[REFUND_FIELD] === undefined ? null : (REFUND_ACTIONS as readonly string[]).includes(form[REFUND_FIELD]) ? (form[REFUND_FIELD] as RefundAction) : null;
  if (form[REFUND_FIELD] !== undefined && !refund) errors[REFUND_FIELD] = ['The selected refund action is invalid.'];
  let currency = (form[CURRENCY_FIELD] ?? '').trim().toUpperCase();
  const priced = BILLING_CYCLES.some((cycle) => (form[priceField(cycle)] ?? '').trim() !== '');
  try {
    if (priced) currency = normalizeCurrency(currency);
  } catch (error) {
    errors[CURRENCY_FIELD] = [(error as Error).message];
  }
  const plan = BILLING_CYCLES.map((cycle) => {
    const amount = (form[priceField(cycle)] ?? '').trim();
    if (amount && !errors[CURRENCY_FIELD]) {
      try {
        toMinor(amount, currency);
      } catch (error) {
        errors[priceField(cycle)] = [(error as Error).message];
      }
    }
    return { cycle, amount: priceField(cycle) in form ? amount || null : undefined };
  });
  return { plan, currency, refund, errors };
}

/** Applies checked prices to a product. */
export async function applyPrices(deps: Pick<WebDeps, 'billing'>, productUuid: string, plan: PricePlan, currency: string, refund: RefundAction | null): Promise<void> {
  if (refund) await deps.billing.setRefundPolicy(productUuid, refund);
  for (const { cycle, amount } of plan) {
    if (amount === undefined) continue;
    if (amount === null) await deps.billing.deletePrice(productUuid, cycle);
    else await deps.billing.setPrice(productUuid, cycle, amount, currency);
  }
}

/** The submitted form as strings (CSRF token left out). */
export function formStrings(body: unknown): Record<string, string> {
  const form = (body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(form).filter(([k]) => k !== '_csrf').map(([k, v]) => [k, Array.isArray(v) ? String(v[0] ?? '') : String(v ?? '')]));
}
