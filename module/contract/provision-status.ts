// Service provisioning states and the spec's transition table, as data read by the Product base class.
import type { HookEventName } from '../../hooks.ts';

/** Every provisioning status a service can hold. */
export const PROVISION_STATUSES = ['pending', 'processing', 'completed', 'failed', 'error', 'suspended', 'pause', 'terminated'] as const;
export type ProvisionStatus = (typeof PROVISION_STATUSES)[number];

/** Marker of a transition that keeps the current status. */
export const UNCHANGED = 'unchanged' as const;
export type Unchanged = typeof UNCHANGED;
export type NextStatus = ProvisionStatus | Unchanged;

/** Lifecycle actions of a Product module (method names verbatim). */
export const PROVISION_ACTIONS = ['create', 'suspend', 'unsuspend', 'termination', 'change_package'] as const;
export type ProvisionAction = (typeof PROVISION_ACTIONS)[number];
export type JobMethod = `${ProvisionAction}Job`;

/** A lifecycle action: from any status, sets `next` and queues `job`. */
export interface ActionRule {
  action: ProvisionAction;
  from: 'any';
  next: NextStatus;
  job: JobMethod;
  /** Event emitted once the job is queued. */
  event?: HookEventName;
}

/** A job outcome: the status it expects, the status after success and after (final) failure. */
export interface JobRule {
  method: JobMethod;
  action: ProvisionAction;
  from: ProvisionStatus | 'any';
  success: NextStatus;
  failure: NextStatus;
  /** Event emitted on success; a final failure always emits `service.failed`. */
  successEvent: HookEventName;
}

/** Rows "create() … change_package()" of the spec's States table. */
export const ACTION_TRANSITIONS: Readonly<Record<ProvisionAction, ActionRule>> = {
  create: { action: 'create', from: 'any', next: 'processing', job: 'createJob', event: 'service.created' },
  suspend: { action: 'suspend', from: 'any', next: 'processing', job: 'suspendJob' },
  unsuspend: { action: 'unsuspend', from: 'any', next: UNCHANGED, job: 'unsuspendJob' },
  termination: { action: 'termination', from: 'any', next: UNCHANGED, job: 'terminationJob' },
  change_package: { action: 'change_package', from: 'any', next: UNCHANGED, job: 'change_packageJob' },
};

/** Rows "createJob … change_packageJob" of the spec's States table (change_packageJob failure: unchanged). */
export const JOB_TRANSITIONS: Readonly<Record<JobMethod, JobRule>> = {
  createJob: { method: 'createJob', action: 'create', from: 'processing', success: 'completed', failure: 'failed', successEvent: 'service.provisioned' },
  suspendJob: { method: 'suspendJob', action: 'suspend', from: 'processing', success: 'suspended', failure: 'failed', successEvent: 'service.suspended' },
  unsuspendJob: { method: 'unsuspendJob', action: 'unsuspend', from: 'any', success: 'completed', failure: UNCHANGED, successEvent: 'service.unsuspended' },
  terminationJob: { method: 'terminationJob', action: 'termination', from: 'any', success: 'terminated', failure: UNCHANGED, successEvent: 'service.terminated' },
  change_packageJob: { method: 'change_packageJob', action: 'change_package', from: 'any', success: UNCHANGED, failure: UNCHANGED, successEvent: 'service.package_changed' },
};

/** Status after applying `next` to `current`. */
export function applyTransition(current: ProvisionStatus, next: NextStatus): ProvisionStatus {
  return next === UNCHANGED ? current : next;
}

export function isJobMethod(value: unknown): value is JobMethod {
  return typeof value === 'string' && Object.hasOwn(JOB_TRANSITIONS, value);
}
