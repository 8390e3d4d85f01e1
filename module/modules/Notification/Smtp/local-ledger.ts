// The Smtp ledger on the platform process: the sends table (bodies sealed), the delivery task queued on the platform's
// Task queue, and the message composer reading customers, services and panels.
import { MODULE_JOB } from '../../../task/module-job.ts';
import { Task } from '../../../task/task.ts';
import type { DeliveryStart, MailToQueue, MessagePlan, MessagePlanOptions, QueuedMail, SmtpLedger } from './ledger.ts';
import type { MessageEventName } from './messages/catalogue.ts';
import type { MessageComposer } from './messages/compose.ts';
import { NOTIFICATION_QUEUE } from './messages/listeners.ts';
import type { SendStore } from './send-store.ts';

/** Over `smtp_sends` and the composer; the local twin of RemoteSmtpLedger, and what the worker routes answer with. */
export class LocalSmtpLedger implements SmtpLedger {
  constructor(private readonly sends: SendStore, private readonly composer: MessageComposer) {}

  async queue(input: MailToQueue): Promise<QueuedMail> {
    const head = { ...input.origin, channel_uuid: input.channel_uuid, recipient: input.recipient, subject: input.subject };
    if (input.status === 'logged') {
      const { record } = await this.sends.create({ ...head, status: 'logged', tries: 0 });
      return { send_uuid: record.uuid, task_id: null };
    }
    const { job } = input;
    const { record, created } = await this.sends.create({ ...head, status: 'queued', tries: job.tries, mail: input.mail });
    // Recorded already for this event (a second process handling it, a job run twice): its delivery is queued there.
    if (!created) return { send_uuid: record.uuid, task_id: record.task_id };
    const module = { type: 'Notification', name: 'Smtp', ...(input.channel_uuid ? { payment_gateway_uuid: input.channel_uuid } : {}) };
    const taskId = await Task.add(MODULE_JOB, NOTIFICATION_QUEUE, {
      module, method: 'deliverJob', args: [record.uuid], tries: job.tries, backoff: job.backoff, timeout: job.timeout, maxExceptions: job.tries,
    }, ['notification', `send:${record.uuid}`]);
    await this.sends.setTask(record.uuid, taskId);
    return { send_uuid: record.uuid, task_id: taskId };
  }

  async beginDelivery(sendUuid: string): Promise<DeliveryStart> {
    const record = await this.sends.get(sendUuid);
    if (!record) return { state: 'unknown' };
    if (record.status === 'sent') return { state: 'sent' };
    if (record.status !== 'queued') return { state: 'closed', reason: record.last_error ?? `send is ${record.status}` };
    const mail = await this.sends.mail(sendUuid);
    const attempt = await this.sends.beginAttempt(sendUuid);
    return {
      state: 'open',
      send: { uuid: record.uuid, recipient: record.recipient, subject: record.subject, event: record.event, tries: record.tries },
      attempt,
      mail,
    };
  }

  async markSent(sendUuid: string, reply: string): Promise<void> {
    await this.sends.markSent(sendUuid, reply);
  }

  async markFailure(sendUuid: string, error: string, final: boolean): Promise<void> {
    await this.sends.markFailure(sendUuid, error, final);
  }

  async messagePlan(event: MessageEventName, payload: Record<string, unknown>, eventKey: string, options: MessagePlanOptions = {}): Promise<MessagePlan> {
    const earlier = await this.sends.byEventKey(eventKey);
    if (earlier) return { plan: 'earlier', send_uuid: earlier.uuid, status: earlier.status };
    const facts = await this.composer.facts(event, payload, options.signal, options.withLink ?? true);
    return 'skipped' in facts ? { plan: 'skipped', reason: facts.skipped } : { plan: 'mail', facts };
  }

  /** The status of a send (the worker routes' answer to a mark). */
  async status(sendUuid: string): Promise<string | null> {
    return (await this.sends.get(sendUuid))?.status ?? null;
  }
}
