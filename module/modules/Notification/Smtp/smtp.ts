// The SMTP Notification module: sealed channel settings, `send` validated (422 error bag) then queued, delivery jobs
// retried with backoff through the Task queue, every send recorded; without a server the send is recorded as `logged`.
// Logs name a mail (send uuid, event, template, recipient, subject), never its body: bodies hold one-time and reset
// links. Its jobs reach their data through the ledger (ledger.ts), so they run on the platform and in remote workers alike.
import { Notification, type SendResult } from '../../../contract/notification.ts';
import type { PlatformContext } from '../../../contract/platform-context.ts';
import { collectSecretValues, scrub } from '../../../contract/log.ts';
import type { NotificationMessage } from '../../../contract/validation.ts';
import { jobError, jobSuccess, validationErrorResult, type JobResult } from '../../../contract/result.ts';
import { smtpConfigSchema, smtpManifest, type SmtpConfig, type SmtpServices } from './manifest.ts';
import { checkSmtpMessage, mailBodies } from './message.ts';
import { UNKNOWN_SEND } from './ledger.ts';
import { isMessageEvent, MESSAGE_EVENTS } from './messages/catalogue.ts';
import { renderFacts } from './messages/compose.ts';
import type { SendOrigin } from './send-store.ts';
import { isConfigured, parseSmtpSettings, SmtpSettingsError, type SmtpSettings } from './settings.ts';
import { smtpTransport, toSmtpFailure, type MailTransport } from './transport.ts';
import type { ModuleResponse } from '../../../contract/http.ts';
import { settingsForm } from '../../../contract/settings-form.ts';
import { settingsSurface, type SettingsPageData, type SettingsTestResult } from '../../../contract/settings-page.ts';
import { sendTestMail, SMTP_FIELDS } from './settings-page.ts';

/** What the host adds to this module's context: the services of its manifest. */
export type SmtpContext = PlatformContext & SmtpServices;

const NEEDS_PLATFORM = 'the Smtp module records its sends on the platform: run it on the platform process or in a remote worker';

/** Answer of a queued or logged send. */
export type SmtpSendResult = SendResult | { status: 'success'; send_uuid: string; delivery: 'queued' | 'logged'; task_id?: string };

const SMTP_SURFACE = settingsSurface('Notification', 'Smtp', 'SMTP');

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

  /** The settings page: the channel's form (the password never shown back) and the "send a test mail" button. */
  getSettingsPage(data: Partial<SettingsPageData> = {}): string {
    return this.view('settings', { configured: isConfigured(this.module_data), form: data.action ? settingsForm(data as SettingsPageData, SMTP_FIELDS) : null });
  }

  /** "Send a test mail": one mail to `input.to` through the saved settings, at once; answers the server's reply. */
  async testSettings(input: Record<string, unknown> = {}): Promise<SettingsTestResult> {
    const result = await sendTestMail({
      settings: this.module_data, to: input.to, brand: this.settings.brand,
      transport: (settings) => Smtp.transport(settings, this.settings.smtp_timeout_ms), clean: (text) => this.withoutSecrets(text),
    });
    if (result.ok) this.logInfo('testSettings', { to: input.to }, result.message);
    else this.logError('testSettings', { to: input.to }, result.message);
    return result;
  }

  /** The settings page's permission key, sidebar entry and the route it links through. */
  adminPermissions() {
    return [SMTP_SURFACE.permission];
  }

  adminWebRoutes() {
    return [SMTP_SURFACE.route];
  }

  adminSidebar() {
    return [SMTP_SURFACE.sidebar];
  }

  /** The sidebar link's controller: on to the platform's settings page of this module. */
  settingsLink(): ModuleResponse {
    return SMTP_SURFACE.redirect;
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

  /** Validates, records and queues one mail (or, with no server configured, records it as `logged`); `origin` says which event caused it. */
  async queueMail(data: Record<string, unknown>, origin: SendOrigin): Promise<SmtpSendResult> {
    const checked = checkSmtpMessage(data);
    if (!checked.success) {
      this.logDebug('send', { to: data.to }, checked.errors);
      return validationErrorResult(checked.errors);
    }
    const ledger = this.own.smtpLedger;
    if (!ledger) return { status: 'error', message: NEEDS_PLATFORM };
    const message = checked.data;
    const mail = mailBodies(message);
    const head = { channel_uuid: this.payment_gateway_uuid, recipient: message.to, subject: message.subject, origin };
    if (!isConfigured(this.module_data)) {
      const record = { uuid: (await ledger.queue({ ...head, status: 'logged' })).send_uuid };
      const named = mailName(record.uuid, message.to, message.subject, origin, mail.attachments.length);
      this.logInfo('send', named, { delivery: 'not sent: no SMTP server configured' });
      // A warning, so it shows at the demo's log level: which mail was not sent (never its text, which may hold a link).
      this.ctx.logger.warn({ module: 'Notification/Smtp', ...named }, 'e-mail not sent: no SMTP channel configured (set one up to deliver it)');
      return { status: 'success', send_uuid: record.uuid, delivery: 'logged' };
    }
    const queued = await ledger.queue({ ...head, status: 'queued', mail, job: this.settings.job });
    const taskId = queued.task_id ?? '';
    this.logDebug('send', mailName(queued.send_uuid, message.to, message.subject, origin, mail.attachments.length), { delivery: 'queued', task_id: taskId });
    return { status: 'success', send_uuid: queued.send_uuid, delivery: 'queued', task_id: taskId };
  }

  /**
   * Job: one delivery attempt of a recorded send. Success marks it sent with the server's reply. A failure answers
   * `{status:'error'}` (the queue retries after its backoff); on the last try the send is `failed` and the server's
   * reply, secrets removed, goes to the module log at level error.
   */
  async deliverJob(sendUuid: string): Promise<JobResult> {
    const ledger = this.own.smtpLedger;
    if (!ledger) return jobError(NEEDS_PLATFORM);
    const start = await ledger.beginDelivery(sendUuid);
    if (start.state === 'unknown') return jobError(UNKNOWN_SEND(sendUuid));
    if (start.state === 'sent') return jobSuccess('already sent');
    if (start.state === 'closed') return jobError(start.reason);
    const { send: record, mail, attempt } = start;
    const request = mailName(record.uuid, record.recipient, record.subject, { event: record.event }, mail?.attachments.length ?? 0);
    const settings = parseSmtpSettings(this.module_data);
    const final = attempt >= record.tries;
    if (!mail || !settings.success) {
      const reason = !mail ? 'the mail body is gone' : `invalid channel settings: ${Object.keys(settings.success ? {} : settings.errors).join(', ')}`;
      await ledger.markFailure(sendUuid, reason, true);
      this.logError('send', request, { status: 'failed', attempt, reason });
      return jobError(reason);
    }
    try {
      const receipt = await Smtp.transport(settings.data, this.settings.smtp_timeout_ms).send({
        from: settings.data.sender, to: record.recipient, subject: record.subject, text: mail.text, html: mail.html,
        attachments: mail.attachments.map((a) => ({ filename: a.filename, content: Buffer.from(a.content_base64, 'base64'), contentType: a.contentType })),
      }, this.abortSignal);
      const reply = this.withoutSecrets(receipt.response);
      await ledger.markSent(sendUuid, reply);
      this.logInfo('send', request, { status: 'sent', attempt, reply });
      return jobSuccess();
    } catch (error) {
      const failure = toSmtpFailure(error);
      const reply = this.withoutSecrets(failure.message);
      await ledger.markFailure(sendUuid, reply, final);
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
    const ledger = this.own.smtpLedger;
    if (!ledger) return jobError(NEEDS_PLATFORM);
    if (!isMessageEvent(event)) return jobError(`no message for event ${event}`);
    const subject = payload.invoice_uuid ?? payload.service_uuid ?? payload.customer_uuid ?? '';
    const eventKey = `${event}|${String(payload.at ?? '')}|${String(subject)}`;
    // With no SMTP server the mail is only recorded: no one-time link is made for it (it would count against the
    // customer's link bound and invalidate a link they may hold).
    const plan = await ledger.messagePlan(event, { ...payload, ...(sealed.secret ?? {}) }, eventKey, { withLink: isConfigured(this.module_data), signal: this.abortSignal });
    if (plan.plan === 'earlier') return jobSuccess(`already ${plan.status} as send ${plan.send_uuid}`);
    if (plan.plan === 'skipped') {
      this.logDebug('message', { event, service_uuid: payload.service_uuid ?? null, invoice_uuid: payload.invoice_uuid ?? null }, `not sent: ${plan.reason}`);
      return jobSuccess(`not sent: ${plan.reason}`);
    }
    // Rendered here, with this process's views (the same release as the platform's: checked when a worker starts).
    const composed = renderFacts(plan.facts, this.ctx.viewsDir);
    if (composed.linkNote) this.logDebug('message', { event, service_uuid: payload.service_uuid ?? null }, `no one-time link in the mail: ${composed.linkNote}`);
    const result = await this.queueMail({ to: composed.to, subject: composed.subject, message: composed.text, html: composed.html }, { ...composed.origin, event_key: eventKey });
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

/** How logs name a mail: which send, what caused it, to whom, its subject and how many attachments; never its body. */
function mailName(sendUuid: string, to: string, subject: string, origin: SendOrigin, attachments: number): Record<string, unknown> {
  const event = origin.event ?? null;
  const template = event && isMessageEvent(event) ? MESSAGE_EVENTS[event] : null;
  return { send_uuid: sendUuid, event, template, to, subject, attachments };
}
