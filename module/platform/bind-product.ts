// Builds the Product instance a job runs on: the service's module, bound to the service, with its product and service data.
import type { Product } from '../contract/product.ts';
import type { ModuleLoader } from './loader.ts';

/** What the binding needs of a service and of its product (stored records, local or fetched from the worker API). */
export interface ServiceForBinding {
  uuid: string;
  product_uuid: string;
  module_name: string;
  service_data: Record<string, unknown>;
}

/** A Product instance of `service`'s module bound to it; throws `service not found` / `product not found`. */
export function bindProduct(
  modules: ModuleLoader,
  uuid: string,
  service: ServiceForBinding | null,
  product: { product_data: Record<string, unknown> } | null,
): Product {
  if (!service) throw new Error(`service not found: ${uuid}`);
  if (!product) throw new Error(`product not found: ${service.product_uuid}`);
  const instance = modules.instance<Product>('Product', service.module_name, { service_uuid: uuid });
  instance.product_data = { ...product.product_data };
  instance.service_data = { ...service.service_data };
  return instance;
}
