// Test fixture of the one-time-link tests: a panel with one server and accounts, page requests, HTML and QR reading.
import assert from 'node:assert/strict';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { manualClock } from '../../../shared/clock.ts';
import { makePanel, type TestPanel } from '../wireguard/panel-fixture.ts';

/** jsqr is CommonJS whose typings declare a default export: at runtime the import is the function itself. */
type JsQr = typeof jsQRModule.default;
const jsQR: JsQr = (jsQRModule as unknown as { default?: JsQr }).default ?? (jsQRModule as unknown as JsQr);

/** The fixture's clock start. */
export const T0 = new Date('2026-03-10T12:00:00.000Z');

/** A panel (manual clock at {@link T0}) with server `srv` and enabled accounts `alice` and `bob`. */
export async function otlPanel(): Promise<TestPanel & { clock: ReturnType<typeof manualClock> }> {
  const clock = manualClock(T0);
  const p = await makePanel({ clock });
  try {
    await p.ok('POST', '/wireguard', { name: 'srv', external_ip: '192.0.2.10', endpoint: 'vpn.example.net' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.2', name: 'alice' });
    await p.ok('POST', '/account', { wg_name: 'srv', allowed_IPs: '10.0.1.3', name: 'bob' });
  } catch (err) {
    await p.close();
    throw err;
  }
  return Object.assign(p, { clock });
}

/** The key of a link URL `http://127.0.0.1/otl/<key>` (asserts the form). */
export function keyOf(url: string): string {
  const m = /^http:\/\/127\.0\.0\.1\/otl\/([0-9a-f]{80})$/.exec(url);
  assert.ok(m, `link URL ${url}`);
  return m[1];
}

/** A page answer: status, headers, HTML. */
export interface PageAnswer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  raw: Buffer;
}

/** GET (confirm) or POST (consume) of the public page at `path` (e.g. `/otl/<key>`), without any cookie. */
export async function page(p: TestPanel, method: 'GET' | 'POST', path: string): Promise<PageAnswer> {
  const res = await p.app.inject({
    method, url: path,
    ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' } : {}),
  });
  return { status: res.statusCode, headers: res.headers, body: res.body, raw: res.rawPayload };
}

/** Undoes handlebars' HTML escaping. */
export function unescapeHtml(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#x27;/g, "'")
    .replace(/&#x60;/g, '`').replace(/&#x3D;/g, '=').replace(/&amp;/g, '&');
}

/** The configuration text shown in the page's `<pre id="otl-config-text">`, or null. */
export function shownConfig(html: string): string | null {
  const m = /<pre id="otl-config-text"[^>]*>([\s\S]*?)<\/pre>/.exec(html);
  return m ? unescapeHtml(m[1]) : null;
}

/** The text the page's QR image (`<img id="otl-qr" src="data:image/png;base64,...">`) decodes to, or null. */
export function shownQr(html: string): string | null {
  const m = /<img id="otl-qr" src="([^"]*)"/.exec(html);
  if (!m) return null;
  const url = unescapeHtml(m[1]);
  assert.match(url, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
  return decodeQrPng(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'));
}

/** Decodes a PNG holding a QR code (jsqr over pngjs); throws when none is found. */
export function decodeQrPng(png: Buffer): string {
  const img = PNG.sync.read(png);
  const code = jsQR(new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.length), img.width, img.height);
  assert.ok(code, 'QR code decodes');
  return code.data;
}

/** The href of the element with this id, or null. */
export function hrefOf(html: string, id: string): string | null {
  const m = new RegExp(`id="${id}"[^>]*href="([^"]*)"`).exec(html);
  return m ? unescapeHtml(m[1]) : null;
}
