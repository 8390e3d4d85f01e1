// The SMTP Notification module: sealed channel settings, `send` validated (422 error bag) then queued, delivery jobs
// retried with backoff through the Task queue, every send recorded; without a server the e-mail goes to the log.
import { Notification, type SendResult } from '../../../contract/notification.ts';
import type { PlatformContext } from '../../../contract/platform-context.ts';
import { collectSecretValues, scrub } from '../../../contract/log.ts';
import type { NotificationMessage } from '../../../contract/validation.ts';
import { jobError, jobSuccess, validationErrorResult, type JobResult } from '../../../contract/result.ts';
import { MODULE_JOB } from '../../../task/module-job.ts';
import { smtpConfigSchema, smtpManifest, type SmtpConfig, type SmtpServices } from './manifest.ts';
import { checkSmtpMessage, mailBodies } from './message.ts';
import { isMessageEvent } from './messages/catalogue.ts';
import { NOTIFICATION_QUEUE } from './messages/listeners.ts';
import type { SendOrigin, SendStore } from './send-store.ts';
import { isConfigured, parseSmtpSettings, SmtpSettingsError, type SmtpSettings } from './settings.ts';
import { smtpTransport, toSmtpFailure, type MailTransport } from './transport.ts';

/** What the host adds to this module's context: the services of its manifest. */
export type SmtpContext = PlatformContext & SmtpServices;

export const NEEDS_PLATFORM = 'the Smtp module records its sends in the platform database: run its jobs on the platform process';
export const UNKNOWN_SEND = (uuid: string) => `unknown send ${uuid}`;

/** Answer of a queued or logged send. */
export type SmtpSendResult = SendResult | { status: 'success'; send_uuid: string; delivery: 'queued' | 'logged'; task_id?: string };

/** Notification module `Smtp`. */
export class Smtp extends Notification {
  static override version = '1.0.0';
  /** Config schema, sends table, message composer and listeners (./manifest.ts). */
  static manifest = smtpManifest;
  /** Builds the transport of a delivery (tests may swap it; the product is nodemailer over SMTP). */
  static transport: (settings: SmtpSettings, timeoutMs: number) => MailTransport = (settings, timeoutMs) =>
    smtpTransport(settings, { connectionMs: timeoutMs, greetingMs: timeoutMs, socketMs: timeoutMs });

  private readonly own: Partial<SmtpServices>;
  private readonly settings: SmtpConfig;

  constructor(ctx: PlatformContext) {
    super(ctx);
    this.own = ctx as Partial<SmtpContext>;
    this.settings = smtpConfigSchema.parse({ enabled: true, version: Smtp.version, ...ctx.config });
  }

  /**
   * Channel settings: host (or `server`), port, encryption `none` | `starttls` | `tls`, username, password, sender,
   * optional `ca` (PEM). Answers the clean settings (stored sealed by the platform); throws SmtpSettingsError (422)
   * with the error bag when invalid.
   */
  override getModuleData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const trimmed = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' && k !== 'password' && k !== 'ca' ? v.trim() : v]));
    const parsed = parseSmtpSettings(trimmed);
    if (!parsed.success) throw new SmtpSettingsError(parsed.errors);
    this.module_data = { ...parsed.data };
    return this.module_data;
  }

  /** The spec's send: 422 error bag, or success once the mail is queued for delivery (or logged without a server). */
  override async send(data: Record<string, unknown> = {}): Promise<SmtpSendResult> {
    return this.queueMail(data, {});
  }

  /** The base class's delivery step: this channel queues (see `queueMail`); throws when the mail was not accepted. */
  protected override async deliver(message: NotificationMessage): Promise<void> {
    const result = await this.queueMail({ ...message }, {});
    if (result.status !== 'success') throw new Error(typeof result.message === 'string' ? result.message : JSON.stringify(result.message));
  }

  /** Validates, records and queues (or logs) one mail; `origin` says which event caused it. */
  async queueMail(data: Record<string, unknown>, origin: SendOrigin, logSecrets: readonly string[] = []): Promise<SmtpSendResult> {
    const checked = checkSmtpMessage(data);
    if (!checked.success) {
      this.logDebug('send', { to: data.to }, checked.errors);
      return validationErrorResult(checked.errors);
    }
    const sends = this.own.smtpSends;
    if (!sends) return { status: 'error', message: NEEDS_PLATFORM };
    const message = checked.data;
    const mail = mailBodies(message);
    const channel = this.payment_gateway_uuid;
    if (!isConfigured(this.module_data)) {
      const record = sends.create({ ...origin, channel_uuid: channel, recipient: message.to, subject: message.subject, status: 'logged', tries: 0, mail });
      const attachments = mail.attachments.map((a) => a.filename);
      const text = String(scrub(mail.text, logSecrets));
      this.logInfo('send', { to: message.to, subject: message.subject, send_uuid: record.uuid, event: origin.event ?? null },
        { delivery: 'logged (no SMTP server configured)', text, attachments });
      // A warning, so it shows at the demo's log level: the mail was not sent, here it is (secrets of the mail removed).
      this.ctx.logger.warn({ module: 'Notification/Smtp', send_uuid: record.uuid, to: message.to, subject: message.subject, text, attachments },
        'e-mail not sent: no SMTP channel configured; its text follows');
      return { status: 'success', send_uuid: record.uuid, delivery: 'logged' };
    }
    const job = this.settings.job;
    const record = sends.create({ ...origin, channel_uuid: channel, recipient: message.to, subject: message.subject, status: 'queued', tries: job.tries, mail });
    const taskId = await this.ctx.tasks.add(MODULE_JOB, NOTIFICATION_QUEUE, {
      module: this, method: 'deliverJob', args: [record.uuid], tries: job.tries, backoff: job.backoff, timeout: job.timeout, maxExceptions: job.tries,
    }, ['notification', `send:${record.uuid}`]);
    sends.setTask(record.uuid, taskId);
    this.logDebug('send', { to: message.to, subject: message.subject, send_uuid: record.uuid, event: origin.event ?? null }, { delivery: 'queued', task_id: taskId });
    return { status: 'success', send_uuid: record.uuid, delivery: 'queued', task_id: taskId };
  }

  /**
   * Job: one delivery attempt of a recorded send. Success marks it sent with the server's reply. A failure answers
   * `{status:'error'}` (the queue retries after its backoff); on the last try the send is `failed` and the server's
   * reply, secrets removed, goes to the module log at level error.
   */
  async deliverJob(sendUuid: string): Promise<JobResult> {
    const sends = this.own.smtpSends;
    if (!sends) return jobError(NEEDS_PLATFORM);
    const record = sends.get(sendUuid);
    if (!record) return jobError(UNKNOWN_SEND(sendUuid));
    if (record.status === 'sent') return jobSuccess('already sent');
    if (record.status !== 'queued') return jobError(record.last_error ?? `send is ${record.status}`);
    const request = { to: record.recipient, subject: record.subject, send_uuid: record.uuid, event: record.event };
    const mail = sends.mail(sendUuid);
    const settings = parseSmtpSettings(this.module_data);
    const attempt = sends.beginAttempt(sendUuid);
    const final = attempt >= record.tries;
    if (!mail || !settings.success) {
      const reason = !mail ? 'the mail body is gone' : `invalid channel settings: ${Object.keys(settings.success ? {} : settings.errors).join(', ')}`;
      sends.markFailure(sendUuid, reason, true);
      this.logError('send', request, { status: 'failed', attempt, reason });
      return jobError(reason);
    }
    try {
      const receipt = await Smtp.transport(settings.data, this.settings.smtp_timeout_ms).send({
        from: settings.data.sender, to: record.recipient, subject: record.subject, text: mail.text, html: mail.html,
        attachments: mail.attachments.map((a) => ({ filename: a.filename, content: Buffer.from(a.content_base64, 'base64'), contentType: a.contentType })),
      }, this.abortSignal);
      const reply = this.withoutSecrets(receipt.response);
      sends.markSent(sendUuid, reply);
      this.logInfo('send', request, { status: 'sent', attempt, reply });
      return jobSuccess();
    } catch (error) {
      const failure = toSmtpFailure(error);
      const reply = this.withoutSecrets(failure.message);
      sends.markFailure(sendUuid, reply, final);
      const response = { status: final ? 'failed' : 'retrying', attempt, tries: record.tries, code: failure.code, transient: failure.transient, reply };
      if (final) this.logError('send', request, response);
      else this.logInfo('send', request, response);
      return jobError(reply);
    }
  }

  /**
   * Job (queued by the message listeners): the e-mail of a platform event to the customer concerned, composed from
   * views/notifications/ and sent through this channel (or logged when the channel has no server). `sealed.secret`
   * holds the payload's secret members (a reset link), kept sealed in the task record.
   */
  async messageJob(event: string, payload: Record<string, unknown>, sealed: { secret?: Record<string, unknown> } = {}): Promise<JobResult> {
    const composer = this.own.smtpComposer;
    if (!composer) return jobError(NEEDS_PLATFORM);
    if (!isMessageEvent(event)) return jobError(`no message for event ${event}`);
    const subject = payload.invoice_uuid ?? payload.service_uuid ?? payload.customer_uuid ?? '';
    const eventKey = `${event}|${String(payload.at ?? '')}|${String(subject)}`;
    const earlier = this.own.smtpSends?.byEventKey(eventKey);
    if (earlier) return jobSuccess(`already ${earlier.status} as send ${earlier.uuid}`);
    const composed = await composer.compose(event, { ...payload, ...(sealed.secret ?? {}) }, this.ctx.viewsDir, this.abortSignal);
    if ('skipped' in composed) {
      this.logDebug('message', { event, service_uuid: payload.service_uuid ?? null, invoice_uuid: payload.invoice_uuid ?? null }, `not sent: ${composed.skipped}`);
      return jobSuccess(`not sent: ${composed.skipped}`);
    }
    if (composed.linkNote) this.logDebug('message', { event, service_uuid: payload.service_uuid ?? null }, `no one-time link in the mail: ${composed.linkNote}`);
    const result = await this.queueMail({ to: composed.to, subject: composed.subject, message: composed.text, html: composed.html }, { ...composed.origin, event_key: eventKey }, composed.secrets);
    if (result.status === 'success') return jobSuccess();
    return jobError(typeof result.message === 'string' ? result.message : JSON.stringify(result.message));
  }

  /** Text with the channel's secrets (password, its base64 forms, AUTH PLAIN) removed. */
  private withoutSecrets(text: string): string {
    const secrets = collectSecretValues({ c: this.configValues, m: this.module_data });
    const password = typeof this.module_data.password === 'string' ? this.module_data.password : '';
    if (password) {
      secrets.add(Buffer.from(password).toString('base64'));
      const user = typeof this.module_data.username === 'string' ? this.module_data.username : '';
      secrets.add(Buffer.from(`\u0000${user}\u0000${password}`).toString('base64'));
    }
    return String(scrub(text, secrets));
  }
}
