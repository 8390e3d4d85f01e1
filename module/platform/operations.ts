// Admin operations kept under their earlier names (what the API routes, the demo and the benchmarks call): each
// delegates to the service that owns it; `retryTask` queues a failed task again (the lifecycle sets the status).
import type { JobResult } from '../contract/result.ts';
import type { TaskQueue, TaskRecord } from '../task/queue.ts';
import { HttpError, UNKNOWN_TASK } from './errors.ts';
import type { Catalogue } from './services/catalogue.ts';
import type { ServiceAdmin, ServiceView } from './services/service-admin.ts';

export { INVALID_PRODUCT_DATA } from './services/catalogue.ts';
export { INVALID_SERVICE_DATA, type ServiceView } from './services/service-admin.ts';

export interface OperationsDeps {
  catalogue: Catalogue;
  serviceAdmin: ServiceAdmin;
  queue: TaskQueue;
}

/** The platform's admin operations; every method validates what it must and throws HttpError for the API. */
export class PlatformOperations {
  constructor(private readonly deps: OperationsDeps) {}

  createProduct(moduleName: string, productData: Record<string, unknown>): Promise<{ uuid: string; product_data: Record<string, unknown> }> {
    return this.deps.catalogue.createProduct(moduleName, productData);
  }

  createService(productUuid: string, serviceData: Record<string, unknown>): Promise<{ uuid: string; provision_status: string }> {
    return this.deps.serviceAdmin.createService(productUuid, serviceData);
  }

  runAction(uuid: string, action: string, body: { product_uuid?: string }): Promise<JobResult> {
    return this.deps.serviceAdmin.runAction(uuid, action, body);
  }

  describeService(uuid: string): Promise<ServiceView> {
    return this.deps.serviceAdmin.describe(uuid);
  }

  /**
   * Queues a failed task again. The service lifecycle follows the queue's `queued` event: a failed create/suspend
   * service goes back to `processing` in the same transaction.
   */
  async retryTask(id: string): Promise<TaskRecord> {
    const task = await this.deps.queue.get(id);
    if (!task) throw new HttpError(404, UNKNOWN_TASK(id));
    if (task.status !== 'failed') throw new HttpError(409, `task ${id} is ${task.status}; only a failed task can be retried`);
    return this.deps.queue.retry(id);
  }
}
