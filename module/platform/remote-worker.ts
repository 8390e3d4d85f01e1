// A remote worker process (`vpnhost platform worker --platform-url ...`): BullMQ job slots on a machine without the
// platform's data directory; every platform-store operation goes through the platform's worker API. Built as a graph
// of features (features/remote-worker-features.ts).
import type { Logger } from 'pino';
import type { ModulesConfig } from '../../config.ts';
import type { Clock } from '../../shared/clock.ts';
import { RunningGraph } from '../../shared/feature-graph.ts';
import type { BullmqQueueOptions } from '../task/bullmq.ts';
import { ABORTED } from './features/registry.ts';
import { REMOTE_WORKER_FEATURES } from './features/remote-worker-features.ts';
import type { ModuleImporter } from './loader.ts';

export { PLATFORM_NOT_BULLMQ, TOKEN_REFUSED, VERSION_MISMATCH } from './features/remote-worker-features.ts';
export { moduleWorkerCall } from './worker-api/module-worker-call.ts';

export interface RemoteWorkerOptions {
  /** Base URL of the platform (`platform serve`), e.g. `https://platform.internal:8090`. */
  platformUrl: string;
  /** A worker token (`vpnhost platform worker-token create`). */
  token: string;
  /** `redis://HOST:PORT`: the Redis the platform queues on. */
  queue: string;
  /** Job slots, default 8. */
  workers?: number;
  logger?: Logger;
  modulesConfig?: ModulesConfig;
  viewsDir?: string;
  clock?: Clock;
  /** BullMQ tuning (lock, stalled interval, prefix) for tests. */
  queueOptions?: Partial<Omit<BullmqQueueOptions, 'url' | 'logger'>>;
  /** Per-request deadline of worker API calls, default 30 s. */
  requestTimeoutMs?: number;
  /** Where module classes come from (default `module/modules/<Type>/<Name>/index.ts`; tests load fixture modules). */
  importer?: ModuleImporter;
}

export interface RunningRemoteWorker {
  workerCount: number;
  /** The id this worker's attempts carry in task records. */
  workerId: string;
  /** Stops taking jobs, finishes (or within the grace time aborts) running attempts, flushes module logs. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Checks the platform (token, queue kind, module versions), then starts `workers` job slots on the Redis queue.
 * Modules get the remote twins of the platform services: services, products, module logs, gateway/channel instances
 * and the task records all live on the platform, and a module's own data (VpnProduct's panels) comes through its
 * worker routes. Nothing is written to local disk and no database handle exists here: installed versions are the
 * ones `/info` reported.
 */
export async function startRemoteWorker(opts: RemoteWorkerOptions): Promise<RunningRemoteWorker> {
  const graph = await RunningGraph.start(REMOTE_WORKER_FEATURES, { options: opts }, ABORTED);
  return {
    workerCount: graph.get('concurrency'),
    workerId: graph.get('queue').workerId,
    close: (graceMs = 10_000) => graph.stop({ graceMs }),
  };
}
