// Zod schemas of the platform's worker API (`/api/worker/*`), shared by the routes and the remote worker's client.
import { z } from 'zod';
import { LOG_LEVELS } from '../../contract/log.ts';
import { PROVISION_STATUSES } from '../../contract/provision-status.ts';

const id = z.string().min(1).max(200);
const data = z.record(z.string(), z.unknown());

const taskOptionsSchema = z.object({
  tries: z.number().int().min(1),
  backoff: z.number().min(0),
  timeout: z.number().positive(),
  maxExceptions: z.number().int().min(1),
});

const taskStatusSchema = z.enum(['pending', 'processing', 'completed', 'failed', 'duplicate']);

/** A task record as `TaskRecord` (input redacted). */
export const taskRecordSchema = z.object({
  id,
  job: z.string(),
  queue: z.string(),
  input: data,
  tags: z.array(z.string()),
  status: taskStatusSchema,
  options: taskOptionsSchema,
  attempts: z.number().int().min(0),
  exceptions: z.number().int().min(0),
  lastError: z.string().nullable(),
  result: z.unknown(),
  createdAt: z.string(),
  updatedAt: z.string(),
  retries: z.number().int().min(0).optional(),
  duplicateOf: z.string().nullable().optional(),
  finishedAt: z.string().nullable().optional(),
});

export const taskAddedSchema = z.object({ id, status: z.enum(['pending', 'duplicate']) });

/** `POST /tasks`: a task queued from inside a remote worker (raw input; the platform seals its secrets). */
export const taskInsertBodySchema = z.object({
  backend: z.literal('bullmq'),
  job: z.string().min(1).max(200),
  queue: z.string().min(1).max(200),
  input: data,
  tags: z.array(z.string().max(500)).max(100),
  options: taskOptionsSchema,
});

export const taskIdParamsSchema = z.object({ id });

export const beginBodySchema = z.object({
  worker_id: id, lease_ms: z.number().int().min(1).max(86_400_000),
  /** The generation of the worker's job (see TaskRecordStore.beginAttempt); absent: any. */
  retries: z.number().int().min(0).optional(),
});

/** Answer of `POST /tasks/:id/begin`: the claimed record with its unredacted input, or null (`blocked`: ask again later). */
export const beginAnswerSchema = z.object({
  task: z.object({ record: taskRecordSchema, raw_input: data }).nullable(),
  blocked: z.boolean().optional(),
});

const settlementSchema = z.object({
  status: z.enum(['completed', 'failed', 'pending']),
  exceptions: z.number().int().min(0),
  lastError: z.string().nullable(),
  result: z.unknown(),
  availableAt: z.number(),
});

export const settleBodySchema = z.object({ worker_id: id, settlement: settlementSchema });

export const recordAnswerSchema = z.object({ record: taskRecordSchema.nullable() });

export const releaseBodySchema = z.object({ worker_id: id, ids: z.array(id).min(1).max(1000) });
export const releaseAnswerSchema = z.object({ released: z.array(z.string()) });

export const failBodySchema = z.object({ message: z.string().max(10_000) });

export const activeQueuesAnswerSchema = z.object({ queues: z.array(z.string()) });

const provisionStatusSchema = z.enum(PROVISION_STATUSES);

/** A stored service with its secret members opened (the worker's modules need them, e.g. the account password). */
export const serviceSchema = z.object({
  uuid: z.string(),
  product_uuid: z.string(),
  module_name: z.string(),
  service_data: data,
  provision_status: provisionStatusSchema,
  status_reason: z.string().nullable(),
  provision_data: data,
  created_at: z.string(),
  updated_at: z.string(),
});

export const uuidParamsSchema = z.object({ uuid: z.string().min(1).max(64) });
export const statusBodySchema = z.object({ status: provisionStatusSchema, reason: z.string().max(10_000).optional() });
export const dataBodySchema = z.object({ data });

export const productSchema = z.object({
  uuid: z.string(),
  module: z.string(),
  product_data: data,
  name: z.string().default(''),
  description: z.string().default(''),
  position: z.number().int().default(0),
  visible: z.boolean().default(true),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A Payment gateway / Notification channel instance with its module_data opened (`GET /module-instances/:uuid`). */
export const moduleInstanceSchema = z.object({
  uuid: z.string(),
  module_type: z.string(),
  module_name: z.string(),
  label: z.string(),
  module_data: data,
  created_at: z.string(),
  updated_at: z.string(),
});

const moduleLogEntrySchema = z.object({
  module_type: z.string().min(1).max(64),
  module_name: z.string().min(1).max(64),
  action: z.string().max(200),
  level: z.enum(LOG_LEVELS),
  request: z.unknown(),
  response: z.unknown(),
  context: data,
  created_at: z.string().max(64),
});

export const moduleLogsBodySchema = z.object({ entries: z.array(moduleLogEntrySchema).min(1).max(500) });

/** Answer of `GET /info`: what the remote worker checks before it takes jobs. */
export const infoAnswerSchema = z.object({
  queue: z.enum(['embedded', 'bullmq']),
  modules: z.array(z.object({ type: z.enum(['Product', 'Plugin', 'Payment', 'Notification']), name: z.string(), version: z.string() })),
});

/** `POST /billing/jobs`: whether the billing job is finished, and its result (a run's summary so far). */
export const billingJobAnswerSchema = z.object({ finished: z.boolean(), result: z.record(z.string(), z.unknown()) });
