// Notification modules: validated messages (to, subject ≤ 255, message, attachments) delivered through a channel.
import { Module } from './module.ts';
import type { PlatformContext } from './platform-context.ts';
import { errorMessage, validationErrorResult, type ValidationErrorResult } from './result.ts';
import { collectSecretValues, scrub } from './log.ts';
import { notificationMessageSchema, sanitizeInput, validate, type NotificationMessage } from './validation.ts';

export type SendResult = { status: 'success' } | ValidationErrorResult | { status: 'error'; message: string };

/**
 * A Notification module. `send(data)` validates the message (422 error bag on failure) and hands it to the
 * subclass's `deliver`; a delivery failure answers `{status:'error', message}` with secrets removed.
 */
export abstract class Notification extends Module {
  constructor(ctx: PlatformContext) {
    super(ctx, 'Notification');
  }

  /** Channel configuration (server, port, encryption, credentials, sender); kept as `module_data`. */
  getModuleData(data: Record<string, unknown> = {}): Record<string, unknown> {
    this.module_data = sanitizeInput(data);
    return this.module_data;
  }

  /** Delivers a validated message through the channel; throws on failure. */
  protected abstract deliver(message: NotificationMessage): Promise<void>;

  async send(data: Record<string, unknown> = {}): Promise<SendResult> {
    const input = { ...data };
    if (typeof input.to === 'string') input.to = input.to.trim();
    const checked = validate(notificationMessageSchema, input);
    if (!checked.success) {
      this.logDebug('send', { to: input.to }, checked.errors);
      return validationErrorResult(checked.errors);
    }
    try {
      await this.deliver(checked.data);
      this.logInfo('send', { to: checked.data.to, subject: checked.data.subject }, 'sent');
      return { status: 'success' };
    } catch (error) {
      const secrets = collectSecretValues({ c: this.configValues, m: this.module_data });
      const message = String(scrub(errorMessage(error), secrets));
      this.logError('send', { to: checked.data.to, subject: checked.data.subject }, message);
      return { status: 'error', message };
    }
  }
}
