// The public one-time-link page {base_url}/otl/<key> (outside /api/v1, no cookie): GET confirms, POST consumes, downloads.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { wgQuickFilename, type OtlDownloadKind, type OtlService, type OtlViewData } from '../services/otl/otl-service.ts';
import { otlButtons, OtlPageRenderer, type OtlConfigView } from './otl-page-render.ts';

/** Path prefix of the page. */
const OTL_PAGE_PREFIX = '/otl';

/** Download routes' last segment → the file kind. */
const DOWNLOADS: Record<string, OtlDownloadKind> = { 'wireguard.conf': 'wireguard', 'ca.pem': 'ca', profile: 'profile' };

/** The Content-Security-Policy of every page answer: no script at all, styles only with this answer's nonce. */
export function otlCsp(nonce: string): string {
  return [
    "default-src 'none'", `style-src 'nonce-${nonce}'`, "img-src 'self' data:", "form-action 'self'",
    "base-uri 'none'", "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every answer of the page carries (pages and downloads). */
function secure(reply: FastifyReply, nonce: string): FastifyReply {
  return reply.headers({
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'content-security-policy': otlCsp(nonce),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'x-robots-tag': 'noindex, nofollow',
  });
}

/** The configuration page's data as the template reads it; download links are relative to the page URL. */
function configView(key: string, data: OtlViewData, graceMinutes: number): OtlConfigView {
  const base = `${key}/${data.token}`;
  return {
    account: data.account,
    graceMinutes,
    wireguard: data.wireguard && {
      text: data.wireguard.config.enable_config_text ? data.wireguard.text : null,
      qr: data.wireguard.qr,
      qrSize: 320,
      download: `${base}/wireguard.conf`,
      filename: wgQuickFilename(data.account),
      label: data.wireguard.config.download_config_button_label || 'Download configuration',
      buttons: otlButtons(data.wireguard.config),
    },
    ikev2: data.ikev2 && {
      certificate: data.ikev2.certificate ? `${base}/ca.pem` : null,
      certificateLabel: data.ikev2.config.download_certificate_button_label || 'Download CA certificate',
      profile: data.ikev2.profile ? `${base}/profile` : null,
      profileLabel: data.ikev2.config.download_profile_button_label || 'Download IKEv2 profile',
      buttons: otlButtons(data.ikev2.config),
    },
  };
}

/**
 * Registers the page on the root app (no access-hash hook there):
 * - `GET /otl/<key>`: a live link shows the operator's page with a "Show my configuration" button (a prefetch or a
 *   mail scanner's GET never uses the link); any other key shows `not_relevant` with 404.
 * - `POST /otl/<key>`: consumes the link (one atomic UPDATE) and shows the configuration, or `not_relevant` (404).
 * - `GET /otl/<key>/<token>/(wireguard.conf|ca.pem|profile)`: the consuming view's downloads, for the grace period.
 * Every answer: `Cache-Control: no-store`, a nonce CSP without scripts, `Referrer-Policy: no-referrer`.
 */
export function registerOtlPage(app: FastifyInstance, otl: OtlService, renderer = new OtlPageRenderer()): void {
  const page = (reply: FastifyReply, status: number, render: (nonce: string) => string) => {
    const nonce = randomBytes(16).toString('base64url');
    return secure(reply, nonce).code(status).type('text/html; charset=utf-8').send(render(nonce));
  };
  const notRelevant = (reply: FastifyReply) => page(reply, 404, (nonce) => renderer.notRelevant({ page: otl.settings.page(), nonce }));

  // Wildcards rather than `:key` parameters: a key of any length reaches the same code (no 414 for long ones).
  app.get<{ Params: { '*': string } }>(`${OTL_PAGE_PREFIX}/*`, async (request, reply) => {
    const parts = request.params['*'].split('/');
    if (parts.length === 3) return download(reply, parts[0], parts[1], parts[2]);
    if (parts.length !== 1 || !otl.links.isLive(parts[0])) return notRelevant(reply);
    return page(reply, 200, (nonce) => renderer.confirm({ page: otl.settings.page(), nonce }));
  });

  app.post<{ Params: { '*': string } }>(`${OTL_PAGE_PREFIX}/*`, async (request, reply) => {
    const key = request.params['*'];
    const data = key.includes('/') ? null : await otl.open(key);
    if (!data) return notRelevant(reply);
    return page(reply, 200, (nonce) => renderer.config({ page: data.page, nonce }, configView(key, data, otl.graceMinutes)));
  });

  const download = async (reply: FastifyReply, key: string, token: string, file: string) => {
    const kind = Object.hasOwn(DOWNLOADS, file) ? DOWNLOADS[file] : undefined;
    const found = kind ? await otl.download(key, token, kind) : null;
    if (!found) return notRelevant(reply);
    return secure(reply, randomBytes(16).toString('base64url'))
      .code(200)
      .type(found.contentType)
      .header('content-disposition', `attachment; filename="${found.filename.replace(/[^\w.+=-]/g, '_')}"`)
      .send(found.body);
  };
}
