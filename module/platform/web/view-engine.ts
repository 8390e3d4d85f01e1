// The handlebars instance of the web host's pages: HTML-escaping by default, a few small helpers.
import Handlebars from 'handlebars';
import { formatTime } from './locale-time.ts';

/** A fresh handlebars environment with the helpers the platform templates use. */
export function createViewEngine(): typeof Handlebars {
  const hbs = Handlebars.create();
  hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hbs.registerHelper('json', (value: unknown) => JSON.stringify(value ?? null, null, 2));
  hbs.registerHelper('includes', (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value));
  hbs.registerHelper('or', (...args: unknown[]) => args.slice(0, -1).some(Boolean));
  // {{time value}}: a <time> element in the page's locale (`locale` of the page data); web.js shows times (not days)
  // in the browser's time zone.
  hbs.registerHelper('time', function (value: unknown, options: Handlebars.HelperOptions) {
    if (typeof value !== 'string' || !value) return '';
    const locale = String((options.data?.root as { locale?: string } | undefined)?.locale ?? 'en-GB');
    const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
    const text = hbs.escapeExpression(formatTime(value, locale));
    return new hbs.SafeString(`<time datetime="${hbs.escapeExpression(value)}"${day ? '' : ' data-local'}>${text}</time>`);
  });
  return hbs;
}
