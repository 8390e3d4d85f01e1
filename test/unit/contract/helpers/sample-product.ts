// A Product module for contract tests: each job answers what the test scripted (success, error result, or a throw).
import { Product } from '../../../../module/contract/product.ts';
import type { ClientAreaMenu } from '../../../../module/contract/client-area.ts';
import type { ModuleRequest } from '../../../../module/contract/http.ts';
import type { JobMethod } from '../../../../module/contract/provision-status.ts';
import { jobError, jobSuccess, JOB_ERRORS, type JobResult } from '../../../../module/contract/result.ts';

export type Outcome = 'success' | 'error' | 'throw';

export class SampleProduct extends Product {
  static override version = '1.0.0';
  /** Outcomes per job method, consumed one per call (the last one repeats). */
  outcomes: Partial<Record<JobMethod, Outcome[]>> = {};
  /** Job methods called, in order. */
  calls: JobMethod[] = [];
  /** Signal seen by the last job call. */
  seenSignal: AbortSignal | undefined;

  private answer(method: JobMethod, failure: string): JobResult {
    this.calls.push(method);
    this.seenSignal = this.abortSignal;
    const list = this.outcomes[method] ?? ['success'];
    const outcome = list.length > 1 ? list.shift()! : list[0];
    if (outcome === 'throw') throw new Error(`provider exploded during ${method}`);
    return outcome === 'error' ? jobError(failure) : jobSuccess();
  }

  async createJob(): Promise<JobResult> {
    const result = this.answer('createJob', JOB_ERRORS.creationFailed);
    if (result.status === 'success') await this.saveProvisionData({ account: `acct-${this.service_uuid}`, access_hash: 'h'.repeat(80) });
    return result;
  }

  async suspendJob(): Promise<JobResult> {
    return this.answer('suspendJob', JOB_ERRORS.suspensionFailed);
  }

  async unsuspendJob(): Promise<JobResult> {
    return this.answer('unsuspendJob', JOB_ERRORS.unavailable);
  }

  async terminationJob(): Promise<JobResult> {
    return this.answer('terminationJob', JOB_ERRORS.unknown);
  }

  async change_packageJob(): Promise<JobResult> {
    return this.answer('change_packageJob', JOB_ERRORS.invalidData);
  }

  override getClientAreaMenuConfig(): ClientAreaMenu {
    return { general: { name: 'General', template: 'client_area.general' } };
  }

  variables_general(): Record<string, unknown> {
    return { domain: this.service_data.domain, status: 'active', greeting: this.service_data.notes };
  }

  controllerClient_generalGet(request: ModuleRequest): unknown {
    if (request.query.fail) throw new Error('backend down: password=Sup3rSecret');
    return { domain: this.service_data.domain };
  }
}
