// Times shown in the reader's locale: the language of the request's Accept-Language, formatted on the server (pages
// work without JavaScript; web.js then moves them to the browser's time zone) with one cached formatter per locale.
import type { FastifyRequest } from 'fastify';

const LOCALE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;
const formatters = new Map<string, { date: Intl.DateTimeFormat; time: Intl.DateTimeFormat }>();

/** The first well-formed language of Accept-Language that Intl knows, else `en-GB`. */
export function requestLocale(request: FastifyRequest): string {
  const header = String(request.headers['accept-language'] ?? '').slice(0, 200);
  let locale = locales.get(header);
  if (locale === undefined) {
    locale = 'en-GB';
    for (const part of header.split(',')) {
      const tag = part.split(';')[0].trim();
      if (LOCALE.test(tag) && Intl.DateTimeFormat.supportedLocalesOf([tag]).length) {
        locale = tag;
        break;
      }
    }
    if (locales.size > 1000) locales.clear();
    locales.set(header, locale);
  }
  return locale;
}

/** Accept-Language headers already read (browsers send a handful of distinct ones). */
const locales = new Map<string, string>();

function formattersOf(locale: string) {
  let pair = formatters.get(locale);
  if (!pair) {
    if (formatters.size > 200) formatters.clear();
    pair = {
      date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }),
      time: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
    };
    formatters.set(locale, pair);
  }
  return pair;
}

/** `2026-11-27` (a day) or an ISO time, in `locale`; other text unchanged. */
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

function format(value: string, locale: string): string {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const at = new Date(day ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(at.getTime())) return value;
  const pair = formattersOf(locale);
  return day ? pair.date.format(at) : `${pair.time.format(at)} UTC`;
}
