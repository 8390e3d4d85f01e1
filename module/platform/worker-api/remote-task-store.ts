// TaskRecordStore over the platform's worker API: the task records of a remote BullMQ worker.
import type { Settlement } from '../../task/attempt.ts';
import { TaskEvents } from '../../task/events.ts';
import type { TaskAdded, TaskRecord } from '../../task/queue.ts';
import { BLOCKED, type ClaimedTask, type TaskBackend, type TaskInsert, type TaskRecordStore } from '../../task/task-record-store.ts';
import type { WorkerApiClient } from './client.ts';
import {
  activeQueuesAnswerSchema, beginAnswerSchema, recordAnswerSchema, releaseAnswerSchema, taskAddedSchema, taskRecordSchema,
} from './schemas.ts';

/** What a remote worker cannot do: admin operations and the embedded backend stay on the platform. */
export const NOT_FOR_REMOTE_WORKERS = (operation: string) => `${operation} is not available to a remote worker (it runs on the platform)`;

const task = (id: string) => `/tasks/${encodeURIComponent(id)}`;

/** Normalises a parsed record (an absent `result` is null, as the SQLite store answers). */
function toRecord(parsed: ReturnType<typeof taskRecordSchema.parse>): TaskRecord {
  return { ...parsed, result: parsed.result ?? null };
}

/**
 * Task records of a remote worker: each call is one request to the platform, which runs the same TaskStore
 * statement a local worker would (so claims and settlements stay conditional on worker id and status).
 */
export class RemoteTaskStore implements TaskRecordStore {
  /**
   * The changes this worker made, as the platform answered them (the platform raises the same events in its own
   * task store, where its service lifecycle follows them).
   */
  readonly events = new TaskEvents();

  constructor(private readonly api: WorkerApiClient) {}

  async insert(input: TaskInsert): Promise<TaskAdded> {
    if (input.backend !== 'bullmq') throw new Error(NOT_FOR_REMOTE_WORKERS('the embedded queue'));
    return this.api.call('POST', '/tasks', taskAddedSchema, { ...input, backend: 'bullmq' });
  }

  async get(id: string): Promise<TaskRecord | null> {
    const record = await this.api.find(task(id), taskRecordSchema);
    return record ? toRecord(record) : null;
  }

  async list(): Promise<TaskRecord[]> {
    throw new Error(NOT_FOR_REMOTE_WORKERS('listing tasks'));
  }

  async beginAttempt(id: string, workerId: string, leaseMs: number, retries?: number): Promise<ClaimedTask | typeof BLOCKED | null> {
    const answer = await this.api.call('POST', `${task(id)}/begin`, beginAnswerSchema, { worker_id: workerId, lease_ms: leaseMs, retries });
    if (answer.blocked) return BLOCKED;
    return answer.task ? { record: toRecord(answer.task.record), rawInput: answer.task.raw_input } : null;
  }

  async settle(id: string, workerId: string, settlement: Settlement): Promise<TaskRecord | null> {
    const answer = await this.api.call('POST', `${task(id)}/settle`, recordAnswerSchema, {
      worker_id: workerId,
      settlement: { ...settlement, result: settlement.result ?? null },
    });
    const record = answer.record ? toRecord(answer.record) : null;
    if (record) await this.events.emitChange(record);
    return record;
  }

  async release(backend: TaskBackend, scope: { expired: true } | { workerId: string; ids: string[] }): Promise<string[]> {
    if (backend !== 'bullmq' || 'expired' in scope) throw new Error(NOT_FOR_REMOTE_WORKERS('releasing expired leases'));
    if (scope.ids.length === 0) return [];
    return (await this.api.call('POST', '/tasks/release', releaseAnswerSchema, { worker_id: scope.workerId, ids: scope.ids })).released;
  }

  async resetForRetry(): Promise<TaskRecord> {
    throw new Error(NOT_FOR_REMOTE_WORKERS('retrying a task'));
  }

  async fail(id: string, message: string): Promise<TaskRecord | null> {
    const answer = await this.api.call('POST', `${task(id)}/fail`, recordAnswerSchema, { message: message.slice(0, 10_000) });
    const record = answer.record ? toRecord(answer.record) : null;
    if (record) await this.events.emitChange(record);
    return record;
  }

  async activeQueues(backend: TaskBackend): Promise<string[]> {
    if (backend !== 'bullmq') throw new Error(NOT_FOR_REMOTE_WORKERS('the embedded queue'));
    return (await this.api.call('GET', '/queues/active', activeQueuesAnswerSchema)).queues;
  }
}
