// Pure rendering of a notification: subject, text body (not escaped) and HTML body (escaped, in the shared layout)
// from the handlebars templates under views/notifications/.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type Handlebars from 'handlebars';
import { COMPILE_OPTIONS, createViewEngine } from '../../../../../shared/view-engine.ts';
import { MESSAGE_SUBJECTS, type MessageTemplate } from './catalogue.ts';

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

const hbs = createViewEngine();
const compiled = new Map<string, { mtimeMs: number; render: Handlebars.TemplateDelegate }>();

function template(file: string, escape: boolean): Handlebars.TemplateDelegate {
  const key = `${escape ? 'html' : 'text'}:${file}`;
  const { mtimeMs } = statSync(file);
  const cached = compiled.get(key);
  if (cached && cached.mtimeMs === mtimeMs) return cached.render;
  const render = hbs.compile(readFileSync(file, 'utf8'), { ...COMPILE_OPTIONS, noEscape: !escape });
  compiled.set(key, { mtimeMs, render });
  return render;
}

const subjects = new Map<MessageTemplate, Handlebars.TemplateDelegate>();

/** The compiled subject line of `name` (compiled once). */
function subjectTemplate(name: MessageTemplate): Handlebars.TemplateDelegate {
  let render = subjects.get(name);
  if (!render) {
    render = hbs.compile(MESSAGE_SUBJECTS[name], { ...COMPILE_OPTIONS, noEscape: true });
    subjects.set(name, render);
  }
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
  const subject = oneLine(subjectTemplate(name)(data));
  const text = template(join(dir, `${name}.text.hbs`), false)(data).replace(/\n{3,}/g, '\n\n').trim() + '\n';
  const body = template(join(dir, `${name}.html.hbs`), true)(data);
  const html = template(join(dir, 'layout.html.hbs'), true)({ ...data, subject, body: new hbs.SafeString(body) });
  return { subject, text, html };
}
