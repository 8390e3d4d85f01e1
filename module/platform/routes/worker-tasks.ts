// Worker API, task records: what a remote BullMQ worker does to the records in the platform database.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { HttpError, UNKNOWN_TASK } from '../errors.ts';
import { BLOCKED } from '../../task/task-record-store.ts';
import type { PlatformRegistry } from '../features/registry.ts';
import {
  beginBodySchema, failBodySchema, releaseBodySchema, settleBodySchema, taskIdParamsSchema, taskInsertBodySchema,
} from '../worker-api/schemas.ts';

/**
 * `POST /tasks` (insert), `GET /tasks/:id`, `POST /tasks/:id/begin|settle|fail`, `POST /tasks/release`,
 * `GET /queues/active` — each one call of the platform's TaskStore, so the store's conditions (worker id, status)
 * decide exactly as for a local worker. `begin` answers the raw (unredacted) input: only over this authenticated API.
 * Each change raises the store's queue events here, in the platform process, so the service lifecycle applies a
 * remote worker's outcomes exactly as a local one's (in the same transaction as the record).
 */
export const workerTaskRoutes = ({ taskStore: store }: Pick<PlatformRegistry, 'taskStore'>): FastifyPluginAsyncZod => async (app) => {

  app.post('/tasks', { schema: { body: taskInsertBodySchema } }, async (request, reply) => reply.code(201).send(await store.insert(request.body)));

  app.get('/tasks/:id', { schema: { params: taskIdParamsSchema } }, async (request) => {
    const record = await store.get(request.params.id);
    if (!record) throw new HttpError(404, UNKNOWN_TASK(request.params.id));
    return record;
  });

  app.post('/tasks/:id/begin', { schema: { params: taskIdParamsSchema, body: beginBodySchema } }, async (request) => {
    const claimed = await store.beginAttempt(request.params.id, request.body.worker_id, request.body.lease_ms, request.body.retries);
    if (claimed === BLOCKED) return { task: null, blocked: true };
    return { task: claimed ? { record: claimed.record, raw_input: claimed.rawInput } : null };
  });

  app.post('/tasks/:id/settle', { schema: { params: taskIdParamsSchema, body: settleBodySchema } }, async (request) => ({
    record: await store.settle(request.params.id, request.body.worker_id, request.body.settlement),
  }));

  app.post('/tasks/:id/fail', { schema: { params: taskIdParamsSchema, body: failBodySchema } }, async (request) => ({
    record: await store.fail(request.params.id, request.body.message),
  }));

  app.post('/tasks/release', { schema: { body: releaseBodySchema } }, async (request) => ({
    released: await store.release('bullmq', { workerId: request.body.worker_id, ids: request.body.ids }),
  }));

  app.get('/queues/active', async () => ({ queues: await store.activeQueues('bullmq') }));
};
