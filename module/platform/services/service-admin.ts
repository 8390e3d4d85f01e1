// Services service: create (validated by the product's module), describe, list (paged, filtered) and run actions on
// hosting services; binds the Product instance a job runs on.
import type { Product } from '../../contract/product.ts';
import { PROVISION_ACTIONS, type ProvisionAction } from '../../contract/provision-status.ts';
import { SECRET_KEY_PATTERN } from '../../contract/redact.ts';
import type { JobResult } from '../../contract/result.ts';
import { bindProduct } from '../bind-product.ts';
import { HttpError, UNKNOWN_ACTION, UNKNOWN_MODULE, UNKNOWN_PRODUCT, UNKNOWN_SERVICE } from '../errors.ts';
import type { ModuleLoader } from '../loader.ts';
import type { PageQuery, ServiceFilter } from '../store/paged-query.ts';
import { productRecord, type ProductQueries, type ProductRecord } from '../store/query/repositories/products.ts';
import type { ServiceQueries, StoredService } from '../store/query/repositories/services.ts';

export const INVALID_SERVICE_DATA = 'invalid service data';

/** Service as the admin API shows it: no secret member of service or provision data. */
export interface ServiceView {
  uuid: string;
  product_uuid: string;
  module: string;
  provision_status: string;
  status_reason: string | null;
  service_data: Record<string, unknown>;
  provision_data: Record<string, unknown>;
  /** The product; `name` is what customers read (empty for products made before names). */
  product: { uuid: string; module: string; name: string; product_data: Record<string, unknown> } | null;
  /** The billing period and state (recurring billing), or null for a service sold without a price. */
  billing: object | null;
  created_at: string;
  updated_at: string;
}

/** Filters and page of `GET /api/admin/services`. */
export interface ServiceQuery extends ServiceFilter, PageQuery {
  /** Substring of the uuid, the username or the status reason. */
  q?: string;
}

/** What ServiceAdmin reads and acts through. */
export interface ServiceAdminDeps {
  services: ServiceQueries;
  products: ProductQueries;
  modules: ModuleLoader;
  /** The billing view of a service (recurring billing), null when it has none (default: none). */
  billingOf?: (uuid: string) => Promise<object | null>;
}

export class ServiceAdmin {
  private readonly services: ServiceQueries;
  private readonly products: ProductQueries;
  private readonly modules: ModuleLoader;
  private readonly billingOf: (uuid: string) => Promise<object | null>;

  constructor(deps: ServiceAdminDeps) {
    ({ services: this.services, products: this.products, modules: this.modules } = deps);
    this.billingOf = deps.billingOf ?? (async () => null);
  }

  /** Validates service data with the product's module and stores a `pending` service. */
  async createService(productUuid: string, serviceData: Record<string, unknown>): Promise<{ uuid: string; provision_status: string }> {
    const service = await this.services.create(await this.validService(productUuid, serviceData));
    return { uuid: service.uuid, provision_status: service.provision_status };
  }

  /**
   * The row of a new service of `productUuid` as its product's module validates and completes `serviceData` (422 with
   * the module's errors when refused); not stored, so a caller can store it in its own transaction.
   */
  async validService(productUuid: string, serviceData: Record<string, unknown>): Promise<{ product_uuid: string; module_name: string; service_data: Record<string, unknown> }> {
    const product = await this.products.get(productUuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    if (!this.modules.has('Product', product.module)) throw new HttpError(422, UNKNOWN_MODULE(product.module));
    const module = this.modules.instance<Product>('Product', product.module);
    module.product_data = { ...product.product_data };
    const result = await module.saveServiceData(serviceData);
    if (result.status !== 'success') throw new HttpError(422, INVALID_SERVICE_DATA, { errors: result.errors });
    return { product_uuid: product.uuid, module_name: product.module, service_data: result.data };
  }

  /**
   * Runs a lifecycle action (`create`, `suspend`, …); `change_package` first moves the service to `product_uuid`, and
   * back when its job could not be queued.
   */
  async runAction(uuid: string, action: string, body: { product_uuid?: string }): Promise<JobResult> {
    if (!(PROVISION_ACTIONS as readonly string[]).includes(action)) throw new HttpError(404, UNKNOWN_ACTION(action));
    // The service and its product in one read (the product is read again only when change_package moves the service).
    const read = await this.services.getWithProduct(uuid);
    if (!read) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
    const { service } = read;
    let product: ProductRecord | null | undefined;
    if (action === 'change_package') {
      if (!body.product_uuid) throw new HttpError(422, 'change_package needs product_uuid');
      const target = await this.products.get(body.product_uuid);
      if (!target) throw new HttpError(404, UNKNOWN_PRODUCT(body.product_uuid));
      if (target.module !== service.module_name) {
        throw new HttpError(422, `product ${target.uuid} is served by ${target.module}, the service by ${service.module_name}`);
      }
      await this.services.setProduct(uuid, target.uuid);
      product = target;
    }
    // Bound to the service as read here (after a change_package, on its new product): the action reads it no more.
    const module = product
      ? bindProduct(this.modules, uuid, { ...service, product_uuid: product.uuid }, product)
      : bindProduct(this.modules, uuid, service, read.product && productRecord(read.product));
    const result = await module[action as ProvisionAction]();
    if (action === 'change_package' && result.status === 'error') await this.services.setProduct(uuid, service.product_uuid);
    return result;
  }

  /** The service with its product; secrets left out. */
  async describe(uuid: string): Promise<ServiceView> {
    return this.view(await this.require(uuid));
  }

  /** A page of services, newest first, with the total count under the filters. */
  async list(query: ServiceQuery): Promise<{ services: ServiceView[]; page: number; per_page: number; total: number }> {
    const { uuids, total } = await this.services.page({ ...query, q: query.q || undefined });
    const services: ServiceView[] = [];
    for (const uuid of uuids) {
      const service = await this.services.get(uuid);
      if (service) services.push(await this.view(service));
    }
    return { services, page: query.page, per_page: query.per_page, total };
  }

  /** A Product instance bound to the service, with its product data and service data loaded. */
  async productForService(uuid: string): Promise<Product> {
    const read = await this.services.getWithProduct(uuid);
    return bindProduct(this.modules, uuid, read?.service ?? null, read?.product ? productRecord(read.product) : null);
  }

  /** The service's view and a Product instance bound to it, from one read of the service and its product (404 when gone, or not `owner`'s). */
  async describeBound(uuid: string, owner?: string): Promise<{ view: ServiceView; module: Product }> {
    const service = await this.require(uuid);
    // With `owner`: someone else's service answers exactly like one that does not exist.
    if (owner !== undefined && service.customer_uuid !== owner) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
    const product = await this.products.get(service.product_uuid);
    return { view: await this.view(service, product), module: bindProduct(this.modules, uuid, service, product) };
  }

  private async require(uuid: string): Promise<StoredService> {
    const service = await this.services.get(uuid);
    if (!service) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
    return service;
  }

  private async view(service: StoredService, known?: ProductRecord | null): Promise<ServiceView> {
    const product = known === undefined ? await this.products.get(service.product_uuid) : known;
    return {
      uuid: service.uuid,
      product_uuid: service.product_uuid,
      module: service.module_name,
      provision_status: service.provision_status,
      status_reason: service.status_reason,
      service_data: withoutSecrets(service.service_data),
      provision_data: withoutSecrets(service.provision_data),
      product: product ? { uuid: product.uuid, module: product.module, name: product.name, product_data: product.product_data } : null,
      billing: await this.billingOf(service.uuid),
      created_at: service.created_at,
      updated_at: service.updated_at,
    };
  }
}

/** Copy of `data` without its secret-named members, at any depth. */
export function withoutSecrets<T>(data: T): T {
  if (Array.isArray(data)) return data.map((item) => withoutSecrets(item)) as T;
  if (!data || typeof data !== 'object') return data;
  return Object.fromEntries(Object.entries(data).filter(([key]) => !SECRET_KEY_PATTERN.test(key)).map(([key, value]) => [key, withoutSecrets(value)])) as T;
}
