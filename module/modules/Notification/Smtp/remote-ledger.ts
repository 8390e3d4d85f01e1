// The Smtp ledger of a remote worker (no platform database): each step is a call of the module's worker routes on the
// platform (`/api/worker/modules/Notification/Smtp/...`, worker token), bodies and answers checked with ledger.ts's
// schemas. The marks are idempotent on the platform, so they are tried again after a lost connection or a 5xx.
import type { ModuleWorkerCall } from '../../../platform/extension.ts';
import {
  deliveryStartSchema, markedSchema, messagePlanSchema, queuedMailSchema,
  type DeliveryStart, type MailToQueue, type MessagePlan, type MessagePlanOptions, type QueuedMail, type SmtpLedger,
} from './ledger.ts';
import type { MessageEventName } from './messages/catalogue.ts';

/** Tries of an idempotent mark, and the pause between them. */
const MARK_TRIES = 3;
const MARK_PAUSE_MS = 500;

/** Status of a failed call (WorkerApiError carries it; 0 = no answer). */
function statusOf(error: unknown): number | null {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}

export class RemoteSmtpLedger implements SmtpLedger {
  constructor(private readonly worker: ModuleWorkerCall, private readonly pauseMs = MARK_PAUSE_MS) {}

  /** `POST /sends`: recorded (and its delivery queued) on the platform. */
  async queue(input: MailToQueue): Promise<QueuedMail> {
    return queuedMailSchema.parse(await this.worker.post('/sends', input));
  }

  /** `POST /sends/:uuid/attempts`. */
  async beginDelivery(sendUuid: string): Promise<DeliveryStart> {
    return deliveryStartSchema.parse(await this.worker.post(`/sends/${encodeURIComponent(sendUuid)}/attempts`, {}));
  }

  /** `POST /sends/:uuid/sent`. */
  async markSent(sendUuid: string, reply: string): Promise<void> {
    await this.mark(`/sends/${encodeURIComponent(sendUuid)}/sent`, { reply });
  }

  /** `POST /sends/:uuid/failures`. */
  async markFailure(sendUuid: string, error: string, final: boolean): Promise<void> {
    await this.mark(`/sends/${encodeURIComponent(sendUuid)}/failures`, { error, final });
  }

  /** `POST /messages/plan`: the platform reads customers, services and panels; the worker renders and sends. */
  async messagePlan(event: MessageEventName, payload: Record<string, unknown>, eventKey: string, options: MessagePlanOptions = {}): Promise<MessagePlan> {
    return messagePlanSchema.parse(await this.worker.post('/messages/plan', { event, payload, event_key: eventKey, with_link: options.withLink ?? true }));
  }

  private async mark(path: string, body: Record<string, unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        markedSchema.parse(await this.worker.post(path, body));
        return;
      } catch (error) {
        const status = statusOf(error);
        const retriable = status !== null && (status === 0 || status >= 500);
        if (!retriable || attempt >= MARK_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      }
    }
  }
}
