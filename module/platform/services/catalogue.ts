// Catalogue service: products, each validated by its Product module's saveProductData before it is stored.
import type { Product } from '../../contract/product.ts';
import { HttpError, UNKNOWN_MODULE, UNKNOWN_PRODUCT } from '../errors.ts';
import type { ModuleLoader } from '../loader.ts';
import type { ProductRecord, ProductRepository } from '../store/repositories/products.ts';

/** Validation failure answered with the module's error bag. */
export const INVALID_PRODUCT_DATA = 'invalid product data';

export class Catalogue {
  constructor(private readonly products: ProductRepository, private readonly modules: ModuleLoader) {}

  /** Validates product data with the module's saveProductData and stores the product. */
  async createProduct(moduleName: string, productData: Record<string, unknown>): Promise<{ uuid: string; product_data: Record<string, unknown> }> {
    if (!this.modules.has('Product', moduleName)) {
      throw new HttpError(404, UNKNOWN_MODULE(moduleName), { modules: this.modules.names('Product') });
    }
    const module = this.modules.instance<Product>('Product', moduleName);
    const result = await module.saveProductData(productData);
    if (result.status !== 'success') throw new HttpError(422, INVALID_PRODUCT_DATA, { errors: result.errors });
    const product = this.products.create(moduleName, result.data);
    return { uuid: product.uuid, product_data: product.product_data };
  }

  /** Validates new product data with the product's module and replaces the stored data (422 with the error bag). */
  async updateProduct(uuid: string, productData: Record<string, unknown>): Promise<ProductRecord> {
    const product = this.require(uuid);
    if (!this.modules.has('Product', product.module)) throw new HttpError(422, UNKNOWN_MODULE(product.module));
    const module = this.modules.instance<Product>('Product', product.module);
    const result = await module.saveProductData(productData);
    if (result.status !== 'success') throw new HttpError(422, INVALID_PRODUCT_DATA, { errors: result.errors });
    this.products.update(uuid, result.data);
    return this.require(uuid);
  }

  get(uuid: string): ProductRecord | null {
    return this.products.get(uuid);
  }

  /** The product, or 404. */
  require(uuid: string): ProductRecord {
    const product = this.products.get(uuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(uuid));
    return product;
  }

  list(): ProductRecord[] {
    return this.products.list();
  }
}
