// The Smtp jobs' one way to their data: recording and queueing a mail, the steps of a delivery attempt, and the facts of
// an event's e-mail. On the platform process it is the sends table and the composer (local-ledger.ts); in a remote
// worker it is the module's worker routes on the platform (remote-ledger.ts). The wire shapes of those routes live here,
// so both sides check the same schemas.
import { z } from 'zod';
import { MESSAGE_EVENTS, MESSAGE_TEMPLATES, type MessageEventName } from './messages/catalogue.ts';
import type { MessageFacts } from './messages/compose.ts';

export const UNKNOWN_SEND = (uuid: string) => `unknown send ${uuid}`;

const uuid = z.string().min(1).max(64);

/** The body of a queued mail (sealed at rest on the platform). */
const storedMailSchema = z.object({
  text: z.string(),
  html: z.string(),
  attachments: z.array(z.object({
    filename: z.string().min(1).max(255),
    content_base64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64'),
    contentType: z.string().max(255).optional(),
  })).max(100),
});

/** What a send is about (the event that caused it, and its key: at most one send per key). */
const sendOriginSchema = z.object({
  event: z.string().max(64).nullable().optional(),
  service_uuid: uuid.nullable().optional(),
  invoice_uuid: uuid.nullable().optional(),
  customer_uuid: uuid.nullable().optional(),
  event_key: z.string().max(512).nullable().optional(),
});

/** Task options of a delivery (the limits of config `job`). */
const deliveryJobSchema = z.object({
  tries: z.number().int().min(1).max(20),
  backoff: z.number().int().min(0).max(86_400),
  timeout: z.number().int().min(5).max(3_600),
});

const mailHead = {
  channel_uuid: uuid.nullable(),
  recipient: z.string().min(1).max(320),
  subject: z.string().max(255),
  origin: sendOriginSchema,
};

/** A mail to record: `queued` (body sealed, delivery job queued with `job`) or `logged` (no server: no body kept). */
export const mailToQueueSchema = z.discriminatedUnion('status', [
  z.object({ ...mailHead, status: z.literal('queued'), mail: storedMailSchema, job: deliveryJobSchema }),
  z.object({ ...mailHead, status: z.literal('logged') }),
]);
export type MailToQueue = z.infer<typeof mailToQueueSchema>;

/** The recorded mail and, when queued, its delivery task. */
export const queuedMailSchema = z.object({ send_uuid: uuid, task_id: z.string().min(1).nullable() });
export type QueuedMail = z.infer<typeof queuedMailSchema>;

/**
 * The start of one delivery attempt: `unknown` send; `sent` already (never send twice); `closed` (failed or logged: the
 * reason); or `open` — the attempt counted (`attempt` is its number) and the sealed body opened (null when gone).
 */
export const deliveryStartSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('unknown') }),
  z.object({ state: z.literal('sent') }),
  z.object({ state: z.literal('closed'), reason: z.string() }),
  z.object({
    state: z.literal('open'),
    send: z.object({ uuid, recipient: z.string().min(1), subject: z.string(), event: z.string().nullable(), tries: z.number().int().min(0) }),
    attempt: z.number().int().min(1),
    mail: storedMailSchema.nullable(),
  }),
]);
export type DeliveryStart = z.infer<typeof deliveryStartSchema>;

/** `POST /sends/:uuid/sent`: the server's reply (free of secrets). */
export const markSentSchema = z.object({ reply: z.string().max(4_000) });
/** `POST /sends/:uuid/failures`: the failure (free of secrets); `final` when no try is left. */
export const markFailureSchema = z.object({ error: z.string().max(4_000), final: z.boolean() });
/** Answer of the two marks: the send's status afterwards. */
export const markedSchema = z.object({ send_uuid: uuid, status: z.enum(['queued', 'sent', 'failed', 'logged']) });

const messageFactsSchema = z.object({
  template: z.enum(MESSAGE_TEMPLATES),
  data: z.record(z.string(), z.unknown()),
  to: z.string().min(1).max(320),
  origin: sendOriginSchema,
  linkNote: z.string().nullable(),
}) satisfies z.ZodType<MessageFacts>;

/** `POST /messages/plan`: an event, its payload (secret members included) and its key. */
export const messagePlanRequestSchema = z.object({
  event: z.enum(Object.keys(MESSAGE_EVENTS) as [MessageEventName, ...MessageEventName[]]),
  payload: z.record(z.string(), z.unknown()),
  event_key: z.string().min(1).max(512),
  /** false when the channel has no SMTP server (the mail is only recorded): no one-time link is made for it. */
  with_link: z.boolean().default(true),
});

/** How a message is planned: `withLink` false makes no one-time link (default true). */
export interface MessagePlanOptions {
  withLink?: boolean;
  signal?: AbortSignal;
}

/** What to do about an event: nothing (`earlier`: its send exists; `skipped`: the reason), or mail these facts. */
export const messagePlanSchema = z.discriminatedUnion('plan', [
  z.object({ plan: z.literal('earlier'), send_uuid: uuid, status: z.enum(['queued', 'sent', 'failed', 'logged']) }),
  z.object({ plan: z.literal('skipped'), reason: z.string() }),
  z.object({ plan: z.literal('mail'), facts: messageFactsSchema }),
]);
export type MessagePlan = z.infer<typeof messagePlanSchema>;

/**
 * The database steps of the Smtp jobs (`send`, `deliverJob`, `messageJob`). The SMTP conversation and the rendering
 * run wherever the job runs; only these steps touch the platform's data.
 */
export interface SmtpLedger {
  /** Records a mail and, when `queued`, queues its delivery job (`deliverJob`, queue `notifications`). */
  queue(input: MailToQueue): Promise<QueuedMail>;
  /** Opens one delivery attempt of a send (see DeliveryStart); counts the attempt only when `open`. */
  beginDelivery(sendUuid: string): Promise<DeliveryStart>;
  /** Delivered: the reply kept, the body dropped. Idempotent. */
  markSent(sendUuid: string, reply: string): Promise<void>;
  /** An attempt failed; `final`: the send is `failed`, its body dropped. Idempotent. */
  markFailure(sendUuid: string, error: string, final: boolean): Promise<void>;
  /** The send already made for `eventKey`, else the facts of the event's e-mail, else why none is sent. */
  messagePlan(event: MessageEventName, payload: Record<string, unknown>, eventKey: string, options?: MessagePlanOptions): Promise<MessagePlan>;
}
