// The Smtp channel's settings page: the form's fields (host, port, encryption, credentials, sender, CA) and the
// "send a test mail" check, which delivers one mail at once through the saved settings and answers the server's reply.
import type { SettingsField } from '../../../contract/settings-form.ts';
import type { SettingsTestResult } from '../../../contract/settings-page.ts';
import { ENCRYPTIONS, parseSmtpSettings, type SmtpSettings } from './settings.ts';
import { toSmtpFailure, type MailTransport } from './transport.ts';

export const SMTP_FIELDS: readonly SettingsField[] = [
  { name: 'host', label: 'Server', type: 'text', secret: false, help: 'Host name or IP address of the SMTP relay' },
  { name: 'port', label: 'Port', type: 'number', secret: false, help: '587 for STARTTLS, 465 for TLS, 25 plain' },
  { name: 'encryption', label: 'Encryption', type: 'select', secret: false, options: ENCRYPTIONS },
  { name: 'username', label: 'Username', type: 'text', secret: false, help: 'Empty: no authentication' },
  { name: 'password', label: 'Password', type: 'password', secret: true },
  { name: 'sender', label: 'Sender', type: 'text', secret: false, help: 'noreply@example.com or Name <noreply@example.com>' },
  { name: 'ca', label: 'Extra CA certificate (PEM)', type: 'textarea', secret: false, help: 'Only for a relay with a private certificate' },
];

const EMAIL = /^[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+$/;
const TEST_MAIL_TO_INVALID = 'Enter the address the test mail goes to.';

/** Sends one test mail to `to` through `settings` now; the server's reply (secrets cut out by `clean`) is the answer. */
export async function sendTestMail(opts: {
  settings: Record<string, unknown>;
  to: unknown;
  brand: string;
  transport(settings: SmtpSettings): MailTransport;
  clean(text: string): string;
}): Promise<SettingsTestResult> {
  const to = typeof opts.to === 'string' ? opts.to.trim() : '';
  if (!EMAIL.test(to)) return { ok: false, message: TEST_MAIL_TO_INVALID };
  const parsed = parseSmtpSettings(opts.settings);
  if (!parsed.success) return { ok: false, message: `The saved settings are incomplete: ${Object.keys(parsed.errors).join(', ')}` };
  const text = `This is a test mail from ${opts.brand}: the SMTP settings work.`;
  try {
    const receipt = await opts.transport(parsed.data).send({
      from: parsed.data.sender, to, subject: `${opts.brand} test mail`, text, html: `<p>${text}</p>`, attachments: [],
    });
    return { ok: true, message: `Test mail sent to ${to}; the server answered: ${opts.clean(receipt.response)}` };
  } catch (error) {
    return { ok: false, message: `The test mail was not sent: ${opts.clean(toSmtpFailure(error).message)}` };
  }
}
