// Times, days and months shown in the reader's locale, formatted on the server (pages work without JavaScript) with one
// cached formatter per locale; the `{{time value}}` helper of the one view engine (view-engine.ts).
import type Handlebars from 'handlebars';

const formatters = new Map<string, { date: Intl.DateTimeFormat; time: Intl.DateTimeFormat; month: Intl.DateTimeFormat }>();

function formattersOf(locale: string) {
  let set = formatters.get(locale);
  if (!set) {
    if (formatters.size > 200) formatters.clear();
    set = {
      date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }),
      time: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
      month: new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }),
    };
    formatters.set(locale, set);
  }
  return set;
}

/** `2026-11` (a month), `2026-11-27` (a day) or an ISO time, in `locale`; other text unchanged. */
export function formatTime(value: unknown, locale: string): string {
  if (typeof value !== 'string' || !value) return '';
  const key = `${locale}|${value}`;
  let text = formatted.get(key);
  if (text === undefined) {
    text = format(value, locale);
    if (formatted.size > 5000) formatted.clear();
    formatted.set(key, text);
  }
  return text;
}

/** Texts already formatted (a page shows the same days again and again; Intl's format() is not cheap). */
const formatted = new Map<string, string>();

const MONTH = /^\d{4}-\d{2}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function format(value: string, locale: string): string {
  const month = MONTH.test(value);
  const day = DAY.test(value);
  const at = new Date(month ? `${value}-01T00:00:00Z` : day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(at.getTime())) return value;
  const set = formattersOf(locale);
  if (month) return set.month.format(at);
  return day ? set.date.format(at) : `${set.time.format(at)} UTC`;
}

/**
 * Registers `{{time value}}`: a `<time>` element in the page's locale (`locale` of the root data, else `en-GB`); the
 * platform's web.js shows times (not days or months) in the browser's time zone.
 */
export function registerTimeHelper(hbs: typeof Handlebars): void {
  hbs.registerHelper('time', function (value: unknown, options: Handlebars.HelperOptions) {
    if (typeof value !== 'string' || !value) return '';
    const locale = String((options.data?.root as { locale?: string } | undefined)?.locale ?? 'en-GB');
    const local = !MONTH.test(value) && !DAY.test(value);
    const text = hbs.escapeExpression(formatTime(value, locale));
    return new hbs.SafeString(`<time datetime="${hbs.escapeExpression(value)}"${local ? ' data-local' : ''}>${text}</time>`);
  });
}
