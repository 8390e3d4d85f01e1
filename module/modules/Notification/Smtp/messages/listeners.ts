// The message listeners on the platform's hooks (hooks.ts HookEvents): each event a customer is told about queues one
// `messageJob` of the Smtp module, bound to the default channel, so the listener stays quick and the send is retried.
import type { Logger } from 'pino';
import type { Hooks } from '../../../../../hooks.ts';
import { MODULE_JOB } from '../../../../task/module-job.ts';
import { Task } from '../../../../task/task.ts';
import { MESSAGE_EVENTS, SECRET_MEMBERS, type MessageEventName } from './catalogue.ts';

/** The queue the Smtp module's jobs go to. */
export const NOTIFICATION_QUEUE = 'notifications';

/** Which channel (Smtp instance) carries the platform's messages; null when none is set up (the mails are logged). */
export interface ChannelPicker {
  defaultChannel(): Promise<string | null>;
}

/** Options of the queued message job. */
export interface MessageJobOptions {
  tries: number;
  backoff: number;
}

/** Queues the message job of one event (after the emitting transaction: never inside it). */
async function queueMessage(event: MessageEventName, payload: object, channels: ChannelPicker, options: MessageJobOptions): Promise<string> {
  await new Promise((resolve) => setImmediate(resolve));
  const channel = await channels.defaultChannel();
  const about = (payload as { service_uuid?: unknown; invoice_uuid?: unknown; customer_uuid?: unknown });
  const ref = typeof about.invoice_uuid === 'string' ? `invoice:${about.invoice_uuid}`
    : typeof about.service_uuid === 'string' ? `about:${about.service_uuid}` : `customer:${String(about.customer_uuid ?? '')}`;
  const open: Record<string, unknown> = { ...payload };
  const secrets: Record<string, unknown> = {};
  for (const member of SECRET_MEMBERS[event] ?? []) {
    secrets[member] = open[member];
    delete open[member];
  }
  return Task.add(MODULE_JOB, NOTIFICATION_QUEUE, {
    module: { type: 'Notification', name: 'Smtp', payment_gateway_uuid: channel },
    method: 'messageJob',
    args: [event, open, { secret: secrets }],
    tries: options.tries,
    backoff: options.backoff,
  }, ['notification', `event:${event}`, ref]);
}

/** Registers one listener per message event; a failure to queue is logged (the emitter never sees it). */
export function registerMessageListeners(hooks: Hooks, channels: ChannelPicker, options: MessageJobOptions, logger: Logger): void {
  for (const event of Object.keys(MESSAGE_EVENTS) as MessageEventName[]) {
    hooks.on(event, async (payload) => {
      try {
        await queueMessage(event, payload, channels, options);
      } catch (error) {
        logger.error({ event, err: error instanceof Error ? error.message : String(error) }, 'notification could not be queued');
      }
    });
  }
}
