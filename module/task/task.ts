// The spec's `Task::add` facade: queues a job on the queue the runtime installed with `Task.use`.
import { z } from 'zod';
import { splitOptions } from './options.ts';
import type { TaskAdded, TaskQueue } from './queue.ts';
import { MODULE_JOB, MODULE_REF_ERROR, toModuleRef } from './module-job.ts';

export const NO_QUEUE_ERROR = 'No task queue installed (Task.use was not called)';

const addArgs = z.object({
  jobName: z.string().min(1),
  queue: z.string().min(1).refine((name) => !name.includes(':'), 'queue names cannot contain ":"'),
  inputData: z.record(z.string(), z.unknown()),
  tags: z.array(z.string()),
});

let installed: TaskQueue | null = null;

/** Static facade over the installed TaskQueue, mirroring the spec's `Task::add($jobName, $queue, $inputData, $tags)`. */
export class Task {
  /** Installs (or with null removes) the queue every `Task.add` uses; called once by the runtime. */
  static use(queue: TaskQueue | null): void {
    installed = queue;
  }

  /** The installed queue; throws when none is. */
  static queue(): TaskQueue {
    if (!installed) throw new Error(NO_QUEUE_ERROR);
    return installed;
  }

  /**
   * Queues a job and returns the task id. The keys `tries`, `backoff`, `timeout` and `maxExceptions` of
   * `inputData` become the task options (defaults 1 / 10 s / 600 s / 2); a `module` instance is stored as its
   * reference `{type, name, service_uuid}`. An identical pending task makes this one a `duplicate` (not run).
   */
  static async add(jobName: string, queue: string, inputData: Record<string, unknown>, tags: string[] = []): Promise<string> {
    return (await Task.dispatch(jobName, queue, inputData, tags)).id;
  }

  /** Like `add`, also telling whether the task was queued or recorded as a duplicate. */
  static async dispatch(jobName: string, queue: string, inputData: Record<string, unknown>, tags: string[] = []): Promise<TaskAdded> {
    const args = addArgs.parse({ jobName, queue, inputData, tags });
    const { input, options } = splitOptions(args.inputData);
    if (input.module !== undefined) input.module = toModuleRef(input.module);
    if (args.jobName === MODULE_JOB && (input.module === undefined || typeof input.method !== 'string' || input.method === '')) {
      throw new Error(MODULE_REF_ERROR);
    }
    return Task.queue().add(args.jobName, args.queue, input, args.tags, options);
  }
}
