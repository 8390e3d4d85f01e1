// Admin operations behind the API routes: panels, products, services, lifecycle actions, task retry.
import { SECRET_KEY_PATTERN } from '../contract/redact.ts';
import type { Product } from '../contract/product.ts';
import { PROVISION_ACTIONS, type ProvisionAction } from '../contract/provision-status.ts';
import type { JobResult } from '../contract/result.ts';
import { PanelClient, PanelError } from '../modules/Product/VpnProduct/panel-client.ts';
import type { TaskRecord } from '../task/queue.ts';
import { HttpError, UNKNOWN_ACTION, UNKNOWN_MODULE, UNKNOWN_PRODUCT, UNKNOWN_SERVICE, UNKNOWN_TASK } from './errors.ts';
import type { Platform } from './platform.ts';
import type { PanelSummary } from './store/repositories/panels.ts';
import type { StoredService } from './store/repositories/services.ts';

/** Validation failure answered with the module's error bag. */
export const INVALID_PRODUCT_DATA = 'invalid product data';
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
  product: { uuid: string; module: string; product_data: Record<string, unknown> } | null;
  created_at: string;
  updated_at: string;
}

/** The platform's admin operations; every method validates what it must and throws HttpError for the API. */
export class PlatformOperations {
  constructor(private readonly platform: Platform) {}

  /** Tests the panel (GET /system/status) and stores it; 422 with the panel's text when it cannot be used. */
  async registerPanel(input: { location: string; api_url: string; access_hash: string }): Promise<PanelSummary & { panel_version: string }> {
    const client = new PanelClient({ apiUrl: input.api_url, accessHash: input.access_hash, connections: 1, connectTimeoutMs: 5_000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000 });
    let version: string;
    try {
      version = (await client.systemStatus(AbortSignal.timeout(15_000))).version;
    } catch (err) {
      const text = err instanceof PanelError ? err.message : `cannot reach panel: ${(err as Error).message}`;
      throw new HttpError(422, text);
    } finally {
      void client.close();
    }
    return { ...this.platform.panels.upsert(input), panel_version: version };
  }

  /** Validates product data with the module's saveProductData and stores the product. */
  async createProduct(moduleName: string, productData: Record<string, unknown>): Promise<{ uuid: string; product_data: Record<string, unknown> }> {
    if (!this.platform.modules.has('Product', moduleName)) {
      throw new HttpError(404, UNKNOWN_MODULE(moduleName), { modules: this.platform.modules.names('Product') });
    }
    const module = this.platform.modules.instance<Product>('Product', moduleName);
    const result = await module.saveProductData(productData);
    if (result.status !== 'success') throw new HttpError(422, INVALID_PRODUCT_DATA, { errors: result.errors });
    const product = this.platform.products.create(moduleName, result.data);
    return { uuid: product.uuid, product_data: product.product_data };
  }

  /** Validates service data with the product's module and stores a `pending` service. */
  async createService(productUuid: string, serviceData: Record<string, unknown>): Promise<{ uuid: string; provision_status: string }> {
    const product = this.platform.products.get(productUuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    if (!this.platform.modules.has('Product', product.module)) throw new HttpError(422, UNKNOWN_MODULE(product.module));
    const module = this.platform.modules.instance<Product>('Product', product.module);
    module.product_data = { ...product.product_data };
    const result = await module.saveServiceData(serviceData);
    if (result.status !== 'success') throw new HttpError(422, INVALID_SERVICE_DATA, { errors: result.errors });
    const service = this.platform.services.create({ product_uuid: product.uuid, module_name: product.module, service_data: result.data });
    return { uuid: service.uuid, provision_status: service.provision_status };
  }

  /**
   * Runs a lifecycle action (`create`, `suspend`, …); `change_package` first moves the service to `product_uuid`, and
   * back when its job could not be queued.
   */
  async runAction(uuid: string, action: string, body: { product_uuid?: string }): Promise<JobResult> {
    if (!(PROVISION_ACTIONS as readonly string[]).includes(action)) throw new HttpError(404, UNKNOWN_ACTION(action));
    const service = this.requireService(uuid);
    if (action === 'change_package') {
      if (!body.product_uuid) throw new HttpError(422, 'change_package needs product_uuid');
      const target = this.platform.products.get(body.product_uuid);
      if (!target) throw new HttpError(404, UNKNOWN_PRODUCT(body.product_uuid));
      if (target.module !== service.module_name) {
        throw new HttpError(422, `product ${target.uuid} is served by ${target.module}, the service by ${service.module_name}`);
      }
      this.platform.services.setProduct(uuid, target.uuid);
    }
    const result = await this.platform.productForService(uuid)[action as ProvisionAction]();
    if (action === 'change_package' && result.status === 'error') this.platform.services.setProduct(uuid, service.product_uuid);
    return result;
  }

  /** The service with its product; secrets left out. */
  describeService(uuid: string): ServiceView {
    const service = this.requireService(uuid);
    const product = this.platform.products.get(service.product_uuid);
    return {
      uuid: service.uuid,
      product_uuid: service.product_uuid,
      module: service.module_name,
      provision_status: service.provision_status,
      status_reason: service.status_reason,
      service_data: withoutSecrets(service.service_data),
      provision_data: withoutSecrets(service.provision_data),
      product: product ? { uuid: product.uuid, module: product.module, product_data: product.product_data } : null,
      created_at: service.created_at,
      updated_at: service.updated_at,
    };
  }

  /** Queues a failed task again; a create/suspend task puts its service back to `processing`. */
  async retryTask(id: string): Promise<TaskRecord> {
    const task = await this.platform.queue.get(id);
    if (!task) throw new HttpError(404, UNKNOWN_TASK(id));
    if (task.status !== 'failed') throw new HttpError(409, `task ${id} is ${task.status}; only a failed task can be retried`);
    const retried = await this.platform.queue.retry(id);
    const uuid = task.tags.find((t) => t.startsWith('service:'))?.slice('service:'.length);
    if (uuid && (task.tags.includes('create') || task.tags.includes('suspend'))) {
      const service = this.platform.services.get(uuid);
      if (service && service.provision_status === 'failed') this.platform.services.setProvisionStatus(uuid, 'processing');
    }
    return retried;
  }

  private requireService(uuid: string): StoredService {
    const service = this.platform.services.get(uuid);
    if (!service) throw new HttpError(404, UNKNOWN_SERVICE(uuid));
    return service;
  }
}

/** Copy of `data` without its secret-named members, at any depth. */
function withoutSecrets<T>(data: T): T {
  if (Array.isArray(data)) return data.map((item) => withoutSecrets(item)) as T;
  if (!data || typeof data !== 'object') return data;
  return Object.fromEntries(Object.entries(data).filter(([key]) => !SECRET_KEY_PATTERN.test(key)).map(([key, value]) => [key, withoutSecrets(value)])) as T;
}
