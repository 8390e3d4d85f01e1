// Smtp's worker API (under /api/worker/modules/Notification/Smtp, behind worker tokens): the ledger steps of the Smtp
// jobs a remote worker runs. Bodies and answers are checked with ledger.ts's schemas (a bad body answers 400 with the
// issues); mail bodies cross only here, over the worker's authenticated channel, and are never logged.
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../../../platform/errors.ts';
import {
  deliveryStartSchema, mailToQueueSchema, markedSchema, markFailureSchema, markSentSchema, messagePlanRequestSchema,
  messagePlanSchema, queuedMailSchema, UNKNOWN_SEND,
} from './ledger.ts';
import type { LocalSmtpLedger } from './local-ledger.ts';
import { MAX_ATTACHMENT_BYTES } from './message.ts';

const SendParams = z.object({ uuid: z.string().min(1).max(64) });
/** A queued mail may carry 10 MiB of attachments (base64: 4/3 of that) besides its bodies. */
const QUEUE_BODY_LIMIT = Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 2 * 1024 * 1024;

/**
 * `POST /sends` (record + queue), `POST /sends/:uuid/attempts` (begin a delivery attempt), `POST /sends/:uuid/sent`,
 * `POST /sends/:uuid/failures`, `POST /messages/plan`. Platform process only (`ledger` is null elsewhere: no routes).
 */
export function smtpWorkerRoutes(ledger: LocalSmtpLedger | null): FastifyPluginAsync {
  return async (app) => {
    if (!ledger) return;
    const api = app.withTypeProvider<ZodTypeProvider>();
    const marked = async (uuid: string) => {
      const status = await ledger.status(uuid);
      if (!status) throw new HttpError(404, UNKNOWN_SEND(uuid));
      return { send_uuid: uuid, status: markedSchema.shape.status.parse(status) };
    };
    api.post('/sends', { bodyLimit: QUEUE_BODY_LIMIT, schema: { body: mailToQueueSchema, response: { 200: queuedMailSchema } } }, async (request) =>
      ledger.queue(request.body));
    api.post('/sends/:uuid/attempts', { schema: { params: SendParams, response: { 200: deliveryStartSchema } } }, async (request) =>
      ledger.beginDelivery(request.params.uuid));
    api.post('/sends/:uuid/sent', { schema: { params: SendParams, body: markSentSchema, response: { 200: markedSchema } } }, async (request) => {
      const found = await marked(request.params.uuid);
      await ledger.markSent(found.send_uuid, request.body.reply);
      return marked(found.send_uuid);
    });
    api.post('/sends/:uuid/failures', { schema: { params: SendParams, body: markFailureSchema, response: { 200: markedSchema } } }, async (request) => {
      const found = await marked(request.params.uuid);
      await ledger.markFailure(found.send_uuid, request.body.error, request.body.final);
      return marked(found.send_uuid);
    });
    api.post('/messages/plan', { schema: { body: messagePlanRequestSchema, response: { 200: messagePlanSchema } } }, async (request) =>
      ledger.messagePlan(request.body.event, request.body.payload, request.body.event_key, { withLink: request.body.with_link }));
  };
}
