// The web host's page templates (views/platform): each page is compiled once, together with its layout, into one
// handlebars template (the page's source stands where the layout says `{{{body}}}`), so a page is one template call
// with the partials (sidebar, flash, pager, revenue) registered once on the engine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Handlebars from 'handlebars';
import { COMPILE_OPTIONS, createViewEngine } from '../../../shared/view-engine.ts';

/** The layouts pages are rendered in (`layouts/<name>.hbs`); `null` renders the page alone. */
export type PageLayout = 'admin' | 'client' | 'plain' | null;

const PARTIALS = ['sidebar', 'flash', 'pager', 'revenue'] as const;
const BODY = '{{{body}}}';
/** A page path: `client/service`, `admin/invoices`, `error` (no dots, no `..`). */
const PAGE_PATH = /^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/i;

/** Compiled page templates of one `views/platform` directory. */
export class PageViews {
  private readonly hbs: typeof Handlebars;
  private readonly compiled = new Map<string, Handlebars.TemplateDelegate>();

  constructor(private readonly root: string) {
    this.hbs = createViewEngine();
    for (const name of PARTIALS) this.hbs.registerPartial(name, this.source(`partials/${name}`));
  }

  /** `page` (e.g. `client/service`) rendered inside `layout` with `data` (the layout sees the same data). */
  render(page: string, layout: PageLayout, data: Record<string, unknown>): string {
    return this.template(page, layout)(data);
  }

  private template(page: string, layout: PageLayout): Handlebars.TemplateDelegate {
    const key = `${layout ?? ''}:${page}`;
    let template = this.compiled.get(key);
    if (!template) {
      if (!PAGE_PATH.test(page)) throw new Error(`invalid page ${JSON.stringify(page)}`);
      const body = this.source(page);
      let source = body;
      if (layout) {
        const frame = this.source(`layouts/${layout}`);
        const at = frame.indexOf(BODY);
        if (at < 0 || frame.indexOf(BODY, at + 1) >= 0) throw new Error(`layout ${layout} must hold ${BODY} once`);
        source = frame.slice(0, at) + body + frame.slice(at + BODY.length);
      }
      template = this.hbs.compile(source, COMPILE_OPTIONS);
      this.compiled.set(key, template);
    }
    return template;
  }

  private source(path: string): string {
    return readFileSync(join(this.root, `${path}.hbs`), 'utf8');
  }
}
