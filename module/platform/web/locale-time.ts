// The reader's locale: the language of the request's Accept-Language; times are formatted in it by
// shared/time-format.ts (the `{{time}}` helper of the platform pages and of module views).
import type { FastifyRequest } from 'fastify';

const LOCALE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

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
