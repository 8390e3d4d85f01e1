// Pure rendering of a notification: subject, text body (not escaped) and HTML body (escaped, in the shared layout)
// from the handlebars templates under views/notifications/.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { MESSAGE_SUBJECTS, type MessageTemplate } from './catalogue.ts';

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

const hbs = Handlebars.create();
hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
const compiled = new Map<string, { mtimeMs: number; render: Handlebars.TemplateDelegate }>();

function template(file: string, escape: boolean): Handlebars.TemplateDelegate {
  const key = `${escape ? 'html' : 'text'}:${file}`;
  const { mtimeMs } = statSync(file);
  const cached = compiled.get(key);
  if (cached && cached.mtimeMs === mtimeMs) return cached.render;
  const render = hbs.compile(readFileSync(file, 'utf8'), { noEscape: !escape, strict: false });
  compiled.set(key, { mtimeMs, render });
  return render;
}

/** Subject lines become one line of at most 255 characters (the Notification message limit). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 255);
}

/**
 * Renders `name` with `data` from `<viewsDir>/notifications/`: `<name>.text.hbs` (plain text, no escaping) and
 * `<name>.html.hbs` (HTML-escaped) wrapped in `layout.html.hbs` as `{{{body}}}`.
 */
export function renderMessage(viewsDir: string, name: MessageTemplate, data: Record<string, unknown>): RenderedMessage {
  const dir = join(viewsDir, 'notifications');
  const subject = oneLine(hbs.compile(MESSAGE_SUBJECTS[name], { noEscape: true })(data));
  const text = template(join(dir, `${name}.text.hbs`), false)(data).replace(/\n{3,}/g, '\n\n').trim() + '\n';
  const body = template(join(dir, `${name}.html.hbs`), true)(data);
  const html = template(join(dir, 'layout.html.hbs'), true)({ ...data, subject, body: new hbs.SafeString(body) });
  return { subject, text, html };
}
