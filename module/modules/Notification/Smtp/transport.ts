// SMTP delivery through nodemailer: one connection per mail with the channel's encryption and credentials; failures
// become SmtpFailure (the server's reply code and text, transient or permanent). nodemailer is loaded by the first
// delivery, not when the platform starts.
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type Nodemailer from 'nodemailer';
import type { SmtpSettings } from './settings.ts';

let mailer: typeof Nodemailer | null = null;

/** One outgoing e-mail, bodies already rendered. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments: Array<{ filename: string; content: Buffer; contentType?: string }>;
}

/** What the server said when it took the mail. */
export interface DeliveryReceipt {
  messageId: string;
  /** The server's final reply, e.g. `250 OK: queued as 123`. */
  response: string;
}

/** Delivers mail; rejects with SmtpFailure. The real one is nodemailer over SMTP, tests may record instead. */
export interface MailTransport {
  send(mail: OutgoingMail, signal?: AbortSignal): Promise<DeliveryReceipt>;
}

/**
 * A failed delivery. `code` is the server's reply code (null when no reply: connection refused, timeout, TLS);
 * `transient` is true for 4xx replies and failures without a reply, false for 5xx (permanent per RFC 5321).
 */
class SmtpFailure extends Error {
  constructor(message: string, readonly code: number | null, readonly transient: boolean) {
    super(message);
    this.name = 'SmtpFailure';
  }
}

/** Timeouts of one SMTP conversation (ms). */
export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
}

const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 15_000, greetingMs: 15_000, socketMs: 30_000 };

/**
 * nodemailer transport for `settings`: `tls` = implicit TLS (`secure`), `starttls` = STARTTLS required (`requireTLS`),
 * `none` = plain text (`ignoreTLS`). Certificates are verified (against `ca` too when given). AUTH when a username is set.
 */
export function smtpTransport(settings: SmtpSettings, timeouts: SmtpTimeouts = DEFAULT_SMTP_TIMEOUTS): MailTransport {
  return {
    async send(mail, signal) {
      mailer ??= createRequire(import.meta.url)('nodemailer') as typeof Nodemailer;
      const transporter = mailer.createTransport({
        host: settings.host,
        port: settings.port,
        secure: settings.encryption === 'tls',
        requireTLS: settings.encryption === 'starttls',
        ignoreTLS: settings.encryption === 'none',
        auth: settings.username ? { user: settings.username, pass: settings.password ?? '' } : undefined,
        // SNI carries host names only (RFC 6066): none for an IP literal.
        tls: { ...(settings.ca ? { ca: [settings.ca] } : {}), ...(isIP(settings.host) ? {} : { servername: settings.host }) },
        connectionTimeout: timeouts.connectionMs,
        greetingTimeout: timeouts.greetingMs,
        socketTimeout: timeouts.socketMs,
        logger: false,
        debug: false,
      });
      const onAbort = () => transporter.close();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const info = await transporter.sendMail({
          from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html,
          attachments: mail.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
        });
        return { messageId: String(info.messageId ?? ''), response: String(info.response ?? '') };
      } catch (error) {
        throw toSmtpFailure(error);
      } finally {
        signal?.removeEventListener('abort', onAbort);
        transporter.close();
      }
    },
  };
}

/** nodemailer's error → SmtpFailure: the reply code and text (and the command it answered), else the connection error. */
export function toSmtpFailure(error: unknown): SmtpFailure {
  if (error instanceof SmtpFailure) return error;
  const e = (error ?? {}) as { responseCode?: unknown; response?: unknown; code?: unknown; message?: unknown; command?: unknown };
  const code = typeof e.responseCode === 'number' ? e.responseCode : null;
  const reply = typeof e.response === 'string' && e.response ? e.response : null;
  const text = reply ?? `${typeof e.code === 'string' ? `${e.code}: ` : ''}${typeof e.message === 'string' && e.message ? e.message : String(error)}`;
  // The command the server answered (`STARTTLS`, `AUTH PLAIN`, `RCPT TO`, ...): which step of the conversation failed.
  const step = reply && typeof e.command === 'string' && e.command ? ` (reply to ${e.command})` : '';
  return new SmtpFailure(text + step, code, code === null || (code >= 400 && code < 500));
}
