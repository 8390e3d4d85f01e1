// Builds the Product instance a job runs on: the service's module, bound to the service as read, with its product data.
import type { Product } from '../contract/product.ts';
import { PROVISION_STATUSES, type ProvisionStatus } from '../contract/provision-status.ts';
import type { ModuleLoader } from './loader.ts';

/** What the binding needs of a service and of its product (stored records, local or fetched from the worker API). */
export interface ServiceForBinding {
  uuid: string;
  product_uuid: string;
  module_name: string;
  service_data: Record<string, unknown>;
  /** With both, the instance is bound to the record as read (Product.bindService): it does not read it again. */
  provision_status?: string;
  provision_data?: Record<string, unknown>;
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
  const { provision_status: status, provision_data: provision } = service;
  if (provision !== undefined && (PROVISION_STATUSES as readonly unknown[]).includes(status)) {
    instance.bindService({ uuid, product_uuid: service.product_uuid, module_name: service.module_name, provision_status: status as ProvisionStatus, service_data: service.service_data, provision_data: provision });
  } else {
    instance.service_data = { ...service.service_data };
  }
  return instance;
}
