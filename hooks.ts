// Platform event listeners (the spec's hooks.php): the typed service events, their default logging listener, the bus.
import type { Logger } from 'pino';
import { EventBus } from './module/contract/event-bus.ts';
import type { ProvisionAction } from './module/contract/provision-status.ts';

/** Common payload of every service event. */
export interface ServiceEvent {
  service_uuid: string;
  product_uuid?: string | null;
  /** Name of the Product module handling the service, e.g. `VpnProduct`. */
  module: string;
  /** Why it happened (failure text, admin note); never a secret. */
  reason?: string;
  /** ISO timestamp from the platform clock. */
  at: string;
}

/** Payload of `service.failed`: which action failed and why. */
export interface ServiceFailedEvent extends ServiceEvent {
  action: ProvisionAction;
  reason: string;
}

/** Event name → payload. */
export interface HookEvents {
  /** `create()` accepted the service: status `processing`, `createJob` queued. */
  'service.created': ServiceEvent;
  /** `createJob` succeeded: status `completed`, provision data stored. */
  'service.provisioned': ServiceEvent;
  /** A job failed for good (last try, or a throw reaching maxExceptions); status `failed` for create/suspend, unchanged otherwise. */
  'service.failed': ServiceFailedEvent;
  /** `suspendJob` succeeded: status `suspended`. */
  'service.suspended': ServiceEvent;
  /** `unsuspendJob` succeeded: status `completed`. */
  'service.unsuspended': ServiceEvent;
  /** `terminationJob` succeeded: status `terminated`. */
  'service.terminated': ServiceEvent;
  /** `change_packageJob` succeeded: status unchanged, the service runs on its new package. */
  'service.package_changed': ServiceEvent;
}

export type HookEventName = keyof HookEvents;
export type Hooks = EventBus<HookEvents>;

export const HOOK_EVENTS: readonly HookEventName[] = [
  'service.created',
  'service.provisioned',
  'service.failed',
  'service.suspended',
  'service.unsuspended',
  'service.terminated',
  'service.package_changed',
];

/** The default listener: one structured log line per service event (`warn` for failures). */
export function registerDefaultListeners(hooks: Hooks, logger: Logger): void {
  for (const event of HOOK_EVENTS) {
    hooks.on(event, (payload) => {
      if (event === 'service.failed') logger.warn({ event, ...payload }, 'service event');
      else logger.info({ event, ...payload }, 'service event');
    });
  }
}

/** A bus whose listener failures are logged, with the default listeners registered; plugins add theirs. */
export function createHooks(logger: Logger): Hooks {
  const hooks: Hooks = new EventBus<HookEvents>((event, error) => {
    logger.error({ event, err: error instanceof Error ? error.message : String(error) }, 'hook listener failed');
  });
  registerDefaultListeners(hooks, logger);
  return hooks;
}
