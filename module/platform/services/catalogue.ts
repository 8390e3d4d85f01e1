// Catalogue service: products, each validated by its Product module's saveProductData before it is stored, with the
// customer-facing listing (name, description, position, visible) validated here.
import { z } from 'zod';
import type { Product } from '../../contract/product.ts';
import { HttpError, UNKNOWN_MODULE, UNKNOWN_PRODUCT } from '../errors.ts';
import type { ModuleLoader } from '../loader.ts';
import type { ProductQueries } from '../store/query/repositories/products.ts';
import { DEFAULT_LISTING, type ProductListing, type ProductRecord } from '../store/query/repositories/products.ts';

/** Validation failure answered with the module's error bag. */
export const INVALID_PRODUCT_DATA = 'invalid product data';
const NAME_REQUIRED = 'The name field is required.';
const NAME_TOO_LONG = 'The name field must not be greater than 100 characters.';
const DESCRIPTION_TOO_LONG = 'The description field must not be greater than 2000 characters.';
const POSITION_INVALID = 'The position field must be an integer between 0 and 100000.';

/** The listing fields, as a form or the API sends them (strings from a form, typed values from JSON). */
const productListingSchema = z.object({
  name: z.string({ error: NAME_REQUIRED }).trim().min(1, { error: NAME_REQUIRED }).max(100, { error: NAME_TOO_LONG }),
  description: z.string().trim().max(2000, { error: DESCRIPTION_TOO_LONG }).default(''),
  position: z.preprocess((v) => (v === '' || v === undefined || v === null ? 0 : typeof v === 'string' ? Number(v) : v),
    z.number({ error: POSITION_INVALID }).int({ error: POSITION_INVALID }).min(0, { error: POSITION_INVALID }).max(100_000, { error: POSITION_INVALID })),
  visible: z.preprocess((v) => v === true || v === 'on' || v === '1' || v === 'true' || v === 1, z.boolean()).default(true),
});

/** What a customer reads as the product's name: its listing name, else module and plan (products made before names). */
export function productName(product: Pick<ProductRecord, 'name' | 'module' | 'product_data'>): string {
  if (product.name) return product.name;
  const plan = product.product_data.plan_type;
  return plan ? `${product.module} · ${String(plan)}` : product.module;
}

/** Validates a listing: the value, or the 422 error bag (field → messages) merged with the module's. */
function checkListing(input: unknown): { listing: ProductListing; errors: null } | { listing: null; errors: Record<string, string[]> } {
  const parsed = productListingSchema.safeParse(input ?? {});
  if (parsed.success) return { listing: parsed.data, errors: null };
  const errors: Record<string, string[]> = {};
  for (const issue of parsed.error.issues) (errors[String(issue.path[0] ?? '_')] ??= []).push(issue.message);
  return { listing: null, errors };
}

export class Catalogue {
  constructor(private readonly products: ProductQueries, private readonly modules: ModuleLoader) {}

  /**
   * Validates product data with the module's saveProductData (and the listing, when given) and stores the product;
   * 422 with one error bag holding the module's and the listing's messages.
   */
  async createProduct(moduleName: string, productData: Record<string, unknown>, listing?: unknown): Promise<ProductRecord> {
    if (!this.modules.has('Product', moduleName)) {
      throw new HttpError(404, UNKNOWN_MODULE(moduleName), { modules: this.modules.names('Product') });
    }
    const { data, listing: checked } = await this.validate(moduleName, productData, listing);
    return this.products.create(moduleName, data, undefined, checked ?? DEFAULT_LISTING);
  }

  /** Validates new product data (and listing, when given) with the product's module and replaces them (422 with the bag). */
  async updateProduct(uuid: string, productData: Record<string, unknown>, listing?: unknown): Promise<ProductRecord> {
    const product = await this.require(uuid);
    if (!this.modules.has('Product', product.module)) throw new HttpError(422, UNKNOWN_MODULE(product.module));
    const { data, listing: checked } = await this.validate(product.module, productData, listing);
    await this.products.update(uuid, data);
    if (checked) await this.products.updateListing(uuid, checked);
    return this.require(uuid);
  }

  /** Validates without storing (422 with the bag, as create and update would answer). */
  async check(moduleName: string, productData: Record<string, unknown>, listing?: unknown): Promise<void> {
    if (!this.modules.has('Product', moduleName)) throw new HttpError(404, UNKNOWN_MODULE(moduleName));
    await this.validate(moduleName, productData, listing);
  }

  private async validate(moduleName: string, productData: Record<string, unknown>, listing: unknown): Promise<{ data: Record<string, unknown>; listing: ProductListing | null }> {
    const module = this.modules.instance<Product>('Product', moduleName);
    const result = await module.saveProductData(productData);
    const own = listing === undefined ? { listing: null, errors: null } : checkListing(listing);
    if (result.status !== 'success' || own.errors) {
      const errors = { ...(own.errors ?? {}), ...(result.status !== 'success' ? (result.errors as Record<string, string[]>) : {}) };
      throw new HttpError(422, INVALID_PRODUCT_DATA, { errors });
    }
    return { data: result.data as Record<string, unknown>, listing: own.listing };
  }

  get(uuid: string): Promise<ProductRecord | null> {
    return this.products.get(uuid);
  }

  /** The product, or 404. */
  async require(uuid: string): Promise<ProductRecord> {
    const product = await this.products.get(uuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(uuid));
    return product;
  }

  /** Every product in order page order. */
  list(): Promise<ProductRecord[]> {
    return this.products.list();
  }
}
