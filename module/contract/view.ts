// Module views: handlebars templates under views/modules/<Type>/<ModuleName>/, HTML-escaped, compiled once per file version.
import { readFileSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Handlebars from 'handlebars';
import { COMPILE_OPTIONS, createViewEngine } from '../../shared/view-engine.ts';

/** The repository's `views/` directory. */
export const DEFAULT_VIEWS_DIR = fileURLToPath(new URL('../../views', import.meta.url));

/** Segments of a template path: letters, digits, `_` and `-`, separated by `.` (or `/`). */
const TEMPLATE_PATH = /^[A-Za-z0-9_-]+([./][A-Za-z0-9_-]+)*$/;
const MODULE_PART = /^[A-Za-z0-9_-]+$/;

const hbs = createViewEngine();

const compiled = new Map<string, { mtimeMs: number; size: number; checkedAt: number; render: Handlebars.TemplateDelegate }>();

/**
 * How long a compiled template is used before its file is checked again (a `stat` per render was a page's cost; an
 * edited template shows within this long).
 */
let recheckMs = 1000;

/** Sets how long a compiled template is used before its file is checked for changes (0: on every render; tests). */
export function setViewRecheckInterval(ms: number): void {
  recheckMs = ms;
}

/**
 * File of a template: `client_area.general` → `<viewsDir>/modules/<type>/<name>/client_area/general.hbs`
 * (dots are directory separators, as in the spec's `client_area.<template_name>`). Rejects anything else.
 */
export function templateFile(viewsDir: string, type: string, name: string, template: string): string {
  const key = `${viewsDir}\0${type}\0${name}\0${template}`;
  let file = files.get(key);
  if (file === undefined) {
    file = resolveTemplateFile(viewsDir, type, name, template);
    if (files.size >= 5000) files.clear();
    files.set(key, file);
  }
  return file;
}

/** Files of template paths already checked (a page renders the same few on every request; only valid ones are kept). */
const files = new Map<string, string>();

function resolveTemplateFile(viewsDir: string, type: string, name: string, template: string): string {
  if (!MODULE_PART.test(type) || !MODULE_PART.test(name)) throw new Error(`invalid module ${type}/${name}`);
  if (!TEMPLATE_PATH.test(template)) throw new Error(`invalid template path ${JSON.stringify(template)}`);
  const base = resolve(viewsDir, 'modules', type, name);
  const file = resolve(base, `${template.split(/[./]/).join(sep)}.hbs`);
  if (!file.startsWith(base + sep)) throw new Error(`invalid template path ${JSON.stringify(template)}`);
  return file;
}

/** Compiled template of `file`, recompiled when the file changes (checked at most every `recheckMs`). */
function load(file: string): Handlebars.TemplateDelegate {
  const now = performance.now();
  const cached = compiled.get(file);
  if (cached && now - cached.checkedAt < recheckMs) return cached.render;
  let stat;
  try {
    stat = statSync(file);
  } catch {
    compiled.delete(file);
    throw new Error(`view not found: ${file}`);
  }
  if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) {
    cached.checkedAt = now;
    return cached.render;
  }
  const render = hbs.compile(readFileSync(file, 'utf8'), COMPILE_OPTIONS);
  compiled.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, checkedAt: now, render });
  return render;
}

/** Renders a module template; `{{value}}` is HTML-escaped, `{{{value}}}` is raw (use only for markup the module built). */
export function renderModuleView(viewsDir: string, type: string, name: string, template: string, data: Record<string, unknown> = {}): string {
  return load(templateFile(viewsDir, type, name, template))(data);
}

/** The spec's `view_admin_module($type, $name, $view, $data = [], $mergeData = [])`; `mergeData` wins on equal keys. */
export function view_admin_module(
  type: string,
  name: string,
  view: string,
  data: Record<string, unknown> = {},
  mergeData: Record<string, unknown> = {},
  viewsDir: string = DEFAULT_VIEWS_DIR,
): string {
  return renderModuleView(viewsDir, type, name, view, { ...data, ...mergeData });
}

/** Forgets compiled templates (tests, hot reload). */
export function clearViewCache(): void {
  compiled.clear();
}

/** Number of compiled templates held. */
export function viewCacheSize(): number {
  return compiled.size;
}

