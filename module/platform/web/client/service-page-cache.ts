// The client area's service pages as rendered, reused while the platform's store is unchanged (its change mark): a
// page is built from the store alone (service, product, billing, open invoices, the customer, a module tab that
// declares `cache: 'store'`), the reader's CSRF token, locale and tab — all of them in the key or behind the mark.
import type { FastifyRequest } from 'fastify';
import { MarkedCache } from '../../store/query/marked-cache.ts';
import { requestLocale } from '../locale-time.ts';
import { hasFlash, knownCsrfToken } from '../render.ts';

/** A `?tab=` value worth a key (a tab key's shape); any other page is rendered each time. */
const TAB_KEY = /^[A-Za-z0-9_]{1,64}$/;

/** Where one request's page would be kept: the store's mark taken before any read, and the key. */
export interface PageSlot {
  mark: string | undefined;
  key: string;
}

/** Rendered service pages per customer, browser (CSRF token), service, tab and locale, valid at one store mark. */
export class ServicePageCache {
  private readonly pages: MarkedCache<string>;

  /** `changeMark`: the store's mark for a request, taken before its first read (`requestMark`); `limit`: pages kept at most (~3 KB each). */
  constructor(private readonly changeMark: (request: FastifyRequest) => string | undefined, limit = 2_000) {
    this.pages = new MarkedCache<string>(limit);
  }

  /**
   * The slot of `request`'s page of service `uuid`, or null when the page is not cacheable: no customer, a notice to
   * show (the page clears it), no CSRF token made yet for the browser's cookie (the page would mint one), an odd tab.
   * The mark is the request's, taken before any of its reads.
   */
  slot(request: FastifyRequest, uuid: string, tab: string | undefined): PageSlot | null {
    const customer = request.customer?.uuid;
    const csrf = knownCsrfToken(request);
    if (!customer || !csrf || hasFlash(request) || (tab !== undefined && !TAB_KEY.test(tab))) return null;
    return { mark: this.changeMark(request), key: `${customer}\n${csrf}\n${uuid}\n${tab ?? ''}\n${requestLocale(request)}` };
  }

  /** The page kept for `slot`, if the store has not changed since it was rendered. */
  get(slot: PageSlot | null): string | undefined {
    return slot ? this.pages.get(slot.mark, slot.key) : undefined;
  }

  /** Keeps `html`, rendered from reads made after `slot` was taken. */
  set(slot: PageSlot | null, html: string): void {
    if (slot) this.pages.set(slot.mark, slot.key, html);
  }
}
