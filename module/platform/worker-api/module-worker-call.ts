// A module's own worker routes (`/api/worker/modules/<Type>/<Name>/...`) as the module sees them in a remote worker.
import { z } from 'zod';
import type { ModuleWorkerCall } from '../extension.ts';
import type { WorkerApiClient } from './client.ts';

/** Calls of module `type`/`name`'s own worker routes. */
export function moduleWorkerCall(api: WorkerApiClient, type: string, name: string): ModuleWorkerCall {
  const base = `/modules/${type}/${name}`;
  return {
    get: (path) => api.find(base + path, z.unknown()),
    post: (path, body) => api.call('POST', base + path, z.unknown(), body),
  };
}
