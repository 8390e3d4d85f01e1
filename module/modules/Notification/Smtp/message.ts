// The Smtp channel's message rules on top of the spec's (to, subject ≤ 255, message, attachments): each attachment
// a named text or base64 content, 10 MiB in all, an optional HTML alternative; and the text/HTML bodies of a message.
import { z } from 'zod';
import { errorBag, escapeHtml, notificationMessageSchema, stripTags } from '../../../contract/validation.ts';
import type { ErrorBag } from '../../../contract/result.ts';
import type { StoredMail } from './send-store.ts';

/** Total attachment size accepted by one message. */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;

const attachmentSchema = z.object({
  filename: z.string({ error: (i) => (i.input === undefined ? 'The filename field is required.' : 'The filename field must be a string.') })
    .min(1, { error: 'The filename field is required.' }).max(255, { error: 'The filename field must not be greater than 255 characters.' })
    .regex(/^[^/\\\r\n]+$/, { error: 'The filename field must not contain slashes or line breaks.' }),
  content: z.string({ error: (i) => (i.input === undefined ? 'The content field is required.' : 'The content field must be a string.') }),
  encoding: z.enum(['utf8', 'base64'], { error: 'The selected encoding is invalid.' }).optional(),
  contentType: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, { error: 'The content type field format is invalid.' }).optional(),
}, { error: 'Each attachment must be an object.' });

/** The message as `send` takes it: the spec's fields, attachments checked, optional `html` alternative of `message`. */
const smtpMessageSchema = notificationMessageSchema.extend({
  attachments: z.array(attachmentSchema, { error: 'The attachments field must be an array.' }).optional()
    .refine((list) => (list ?? []).reduce((n, a) => n + Buffer.byteLength(a.content, a.encoding === 'base64' ? 'base64' : 'utf8'), 0) <= MAX_ATTACHMENT_BYTES,
      { error: `The attachments field must not be greater than ${MAX_ATTACHMENT_BYTES / 1024} kilobytes.` }),
  html: z.string({ error: 'The html field must be a string.' }).optional(),
});
export type SmtpMessage = z.infer<typeof smtpMessageSchema>;

export function checkSmtpMessage(data: Record<string, unknown>): { success: true; data: SmtpMessage } | { success: false; errors: ErrorBag } {
  const input = { ...data };
  if (typeof input.to === 'string') input.to = input.to.trim();
  const parsed = smtpMessageSchema.safeParse(input);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, errors: errorBag(parsed.error) };
}

const LOOKS_LIKE_HTML = /<(?:[a-z][a-z0-9]*)(?:\s[^<>]*)?\/?>/i;

/** Plain text of an HTML body: line breaks for block ends, tags dropped, the common entities decoded. */
export function htmlToText(html: string): string {
  const text = stripTags(html.replace(/<(?:br\s*\/?|\/p|\/div|\/li|\/h[1-6]|\/tr)>/gi, '\n').replace(/<li[^>]*>/gi, '- '));
  return text.replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'").replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** Text and HTML bodies of a message: `message` as HTML (text derived) or as text (HTML escaped); `html` wins as the HTML. */
export function mailBodies(message: SmtpMessage): StoredMail {
  const isHtml = LOOKS_LIKE_HTML.test(message.message);
  const text = isHtml ? htmlToText(message.message) : message.message;
  const html = message.html ?? (isHtml ? message.message : `<div style="white-space:pre-wrap">${escapeHtml(message.message)}</div>`);
  const attachments = (message.attachments ?? []).map((a) => ({
    filename: a.filename,
    content_base64: a.encoding === 'base64' ? Buffer.from(a.content, 'base64').toString('base64') : Buffer.from(a.content, 'utf8').toString('base64'),
    ...(a.contentType ? { contentType: a.contentType } : {}),
  }));
  return { text, html, attachments };
}
