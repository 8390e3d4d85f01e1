// Product modules: product/service data, admin pages, the provisioning lifecycle and its background jobs.
import { z } from 'zod';
import { DEFAULT_TASK_OPTIONS, type TaskOptions } from '../task/queue.ts';
import type { ClientAreaMenu } from './client-area.ts';
import { Module } from './module.ts';
import type { PlatformContext, ServiceRecord } from './platform-context.ts';
import { queueProvisionAction, queueServiceJob, runProvisionJob, type JobRunOptions } from './product-jobs.ts';
import type { JobMethod } from './provision-status.ts';
import { successResult, validationErrorResult, type JobResult, type SaveResult } from './result.ts';
import { errorBag, productDataSchema, sanitizeInput, serviceDataSchema, type Validation } from './validation.ts';

/**
 * A Product module provisions customer services. Subclasses implement the five job methods (createJob …
 * change_packageJob) against their provider and may widen `productSchema()` / `serviceSchema()`.
 *
 * Lifecycle methods (create, suspend, unsuspend, termination, change_package) queue the job and return at once; the
 * platform's service lifecycle sets the status of the spec's table from the queue's events. A job method as written
 * by the subclass only talks to the provider and answers `{status, message?}` (it may read `this.abortSignal` and
 * call `this.saveProvisionData()`); `runJob(method, opts)` runs it for one attempt with the service loaded.
 *
 * Client-area tabs: `getClientAreaMenuConfig()` lists them; each tab `<tab>` has `variables_<tab>()` and optional
 * AJAX handlers `controllerClient_<tab><Method>(request)` (see client-area.ts).
 */
export abstract class Product extends Module {
  /** Task options of this module's jobs, over the spec defaults (tries 1, backoff 10 s, timeout 600 s, maxExceptions 2). */
  static jobOptions: Partial<TaskOptions> = {};

  /**
   * The service as read when this instance was bound to it (`bindService`), with what the instance saved since: the
   * action or job attempt the instance was bound for reads its service once, not once per step.
   */
  #bound: ServiceRecord | null = null;

  constructor(ctx: PlatformContext) {
    super(ctx, 'Product');
  }

  /**
   * Binds the instance to `record` as just read from the store (the platform binds one per action or job attempt):
   * `service_uuid` and `service_data` are set from it, and the instance's own reads of the service use it.
   */
  bindService(record: ServiceRecord): void {
    this.service_uuid = record.uuid;
    this.service_data = { ...record.service_data };
    this.#bound = { ...record, service_data: { ...record.service_data }, provision_data: { ...record.provision_data } };
  }

  /** The current service: as bound (bindService), else read from the store; null when there is none. */
  async currentService(): Promise<ServiceRecord | null> {
    if (!this.service_uuid) return null;
    if (this.#bound?.uuid === this.service_uuid) return this.#bound;
    return this.ctx.services.get(this.service_uuid);
  }

  /** Options queued with `method` (override for per-method values). */
  jobOptions(_method: JobMethod): TaskOptions {
    return { ...DEFAULT_TASK_OPTIONS, ...(this.constructor as typeof Product).jobOptions };
  }

  /** Validation of saveProductData (the spec's product data pattern by default). */
  protected productSchema(): z.ZodType<Record<string, unknown>> {
    return productDataSchema;
  }

  /** Validation of saveServiceData (the spec's service data pattern by default). */
  protected serviceSchema(): z.ZodType<Record<string, unknown>> {
    return serviceDataSchema;
  }

  /** Fields getProductData guarantees (the keys of an object productSchema). */
  protected productFields(): string[] {
    const schema = this.productSchema();
    return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  }

  /** Normalized product configuration: missing fields filled with ''; also kept as `product_data`. */
  getProductData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const out: Record<string, unknown> = { ...data };
    for (const field of this.productFields()) if (out[field] === undefined || out[field] === null) out[field] = '';
    this.product_data = out;
    return out;
  }

  /** Validates product configuration: `{status:'success', data, code:200}` or the 422 error bag. */
  async saveProductData(data: Record<string, unknown> = {}): Promise<SaveResult> {
    const checked = await validateAsync(this.productSchema(), sanitizeInput(data));
    if (!checked.success) return validationErrorResult(checked.errors);
    this.product_data = checked.data;
    return successResult(checked.data);
  }

  /** HTML of the admin product page (`admin/product.hbs`). */
  getProductPage(): string {
    return this.view('admin.product', { module_name: this.module_name, product_data: this.product_data });
  }

  /** Service values for display: domain lower-cased and trimmed, username trimmed, notes null when absent. */
  getServiceData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const out: Record<string, unknown> = { ...(Object.keys(data).length ? data : this.service_data) };
    if (typeof out.domain === 'string') out.domain = out.domain.trim().toLowerCase();
    if (typeof out.username === 'string') out.username = out.username.trim();
    if (out.notes === undefined) out.notes = null;
    this.service_data = out;
    return out;
  }

  /** Validates service values and stores them on the current service. */
  async saveServiceData(data: Record<string, unknown> = {}): Promise<SaveResult> {
    const checked = await validateAsync(this.serviceSchema(), sanitizeInput(data));
    if (!checked.success) return validationErrorResult(checked.errors);
    this.service_data = checked.data;
    if (this.service_uuid) await this.ctx.services.saveServiceData(this.service_uuid, checked.data);
    return successResult(checked.data);
  }

  /** HTML of the admin service page (`admin/service.hbs`). */
  getServicePage(): string {
    return this.view('admin.service', { module_name: this.module_name, service_uuid: this.service_uuid, service_data: this.service_data });
  }

  /** Binds the instance to a service: `service_uuid` and `service_data` from the store. False when it does not exist. */
  async loadService(uuid: string): Promise<boolean> {
    const service = await this.ctx.services.get(uuid);
    if (!service) return false;
    this.service_uuid = uuid;
    this.service_data = { ...service.service_data };
    return true;
  }

  /** Stores what provisioning produced on the current service (secret members are encrypted by the store). */
  protected async saveProvisionData(data: Record<string, unknown>): Promise<void> {
    if (!this.service_uuid) throw new Error('saveProvisionData: no current service');
    await this.ctx.services.saveProvisionData(this.service_uuid, data);
    if (this.#bound?.uuid === this.service_uuid) this.#bound.provision_data = { ...data };
  }

  /** Provision data of the current service ({} when none). */
  protected async getProvisionData(): Promise<Record<string, unknown>> {
    return { ...((await this.currentService())?.provision_data ?? {}) };
  }

  create(): Promise<JobResult> {
    return queueProvisionAction(this, 'create', this.ctx);
  }

  suspend(): Promise<JobResult> {
    return queueProvisionAction(this, 'suspend', this.ctx);
  }

  unsuspend(): Promise<JobResult> {
    return queueProvisionAction(this, 'unsuspend', this.ctx);
  }

  termination(): Promise<JobResult> {
    return queueProvisionAction(this, 'termination', this.ctx);
  }

  change_package(): Promise<JobResult> {
    return queueProvisionAction(this, 'change_package', this.ctx);
  }

  abstract createJob(): Promise<JobResult>;
  abstract suspendJob(): Promise<JobResult>;
  abstract unsuspendJob(): Promise<JobResult>;
  abstract terminationJob(): Promise<JobResult>;
  abstract change_packageJob(): Promise<JobResult>;

  /** Runs one attempt of a job method: the service loaded, the abort signal set, secrets cut out of an error text. */
  runJob(method: JobMethod, opts: JobRunOptions = {}): Promise<JobResult> {
    return runProvisionJob(this, method, opts, this[method] as () => Promise<JobResult>);
  }

  /**
   * Methods besides the five provisioning jobs that may be queued as a ModuleJob bound to the current service (e.g. a
   * client-area action such as regenerating keys). They run in the service's queue order; the lifecycle ignores them
   * (the provision status does not change).
   */
  serviceJobMethods(): readonly string[] {
    return [];
  }

  /** Queues `method` (one of serviceJobMethods()) for the current service, tagged `[action, 'service:<uuid>']`; resolves with the task id. */
  protected queueServiceJob(method: string, action: string, options: Partial<TaskOptions> = {}): Promise<string> {
    return queueServiceJob(this, method, action, this.ctx, options);
  }

  /** Client-area tabs keyed by tab key: `{ name, template: 'client_area.<template>' }`. */
  getClientAreaMenuConfig(): ClientAreaMenu {
    return {};
  }
}

/** `schema` checked with its asynchronous refinements (a module's schema may read its store or the host's read API). */
async function validateAsync<S extends z.ZodType>(schema: S, data: unknown): Promise<Validation<z.output<S>>> {
  const parsed = await schema.safeParseAsync(data);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, errors: errorBag(parsed.error) };
}
