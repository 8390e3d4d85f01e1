// The one-time-link page's logic: which part each view shows, built from the consumed link's account, and its downloads.
import QRCode from 'qrcode';
import type { OtlIkev2Config, OtlPageConfig, OtlWireguardConfig } from '../../../shared/wire/otl.ts';
import type { Ikev2Downloads, OtlDownload } from './ikev2-downloads.ts';
import type { OtlLinkService } from './otl-links.ts';
import { OTL_DOWNLOAD_GRACE_MS } from './otl-links.ts';
import type { OtlSettingsService } from './otl-settings.ts';

/** The account data a page shows: read by id when the link is consumed or a download asked for. */
export interface OtlAccountSource {
  /** The account's name, or null when it no longer exists. */
  name(accountId: number): string | null;
  /** The account's wg-quick client configuration (config_text), or null when it no longer exists. */
  configText(accountId: number): string | null;
}

/** The files a consuming view offers. */
export type OtlDownloadKind = 'wireguard' | 'ca' | 'profile';

/** Everything the configuration page of a consuming view shows (before rendering). */
export interface OtlViewData {
  /** Download token of this view (see {@link OTL_DOWNLOAD_GRACE_MS}). */
  token: string;
  account: string;
  page: OtlPageConfig;
  wireguard: { config: OtlWireguardConfig; text: string; qr: string | null } | null;
  ikev2: { config: OtlIkev2Config; certificate: boolean; profile: boolean } | null;
}

/** Side of the page that needs no HTTP: consume, assemble, serve downloads. */
export class OtlService {
  constructor(
    readonly links: OtlLinkService,
    readonly settings: OtlSettingsService,
    private readonly accounts: OtlAccountSource,
    private readonly ikev2: Ikev2Downloads,
  ) {}

  /** Minutes the downloads of a view keep working. */
  readonly graceMinutes = OTL_DOWNLOAD_GRACE_MS / 60_000;

  /**
   * Consumes the link of `key` and assembles its page, or null (unknown, used, expired, account disabled or gone).
   * The WireGuard part follows `enable`, `enable_config_text` and `enable_config_qr`; the IKEv2 part is there when
   * `enable` is set and the IKEv2 side offers at least one of its two files for the account.
   */
  async open(key: string): Promise<OtlViewData | null> {
    const view = this.links.consume(key);
    if (!view) return null;
    const account = this.accounts.name(view.accountId);
    const text = this.accounts.configText(view.accountId);
    if (account === null || text === null) return null;
    const page = this.settings.page();
    const wg = this.settings.wireguard();
    const ikev2Config = this.settings.ikev2();
    const wireguard = wg.enable
      ? { config: wg, text, qr: wg.enable_config_qr ? await QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 2, scale: 6 }) : null }
      : null;
    let ikev2: OtlViewData['ikev2'] = null;
    if (ikev2Config.enable) {
      const [certificate, profile] = await Promise.all([this.ikev2.caCertificate(account), this.ikev2.profile(account)]);
      if (certificate || profile) ikev2 = { config: ikev2Config, certificate: certificate !== null, profile: profile !== null };
    }
    return { token: view.token, account, page, wireguard, ikev2 };
  }

  /** A file of a consuming view while its grace period lasts and its part is still switched on; else null. */
  async download(key: string, token: string, kind: OtlDownloadKind): Promise<OtlDownload | null> {
    const accountId = this.links.download(key, token);
    if (accountId === null) return null;
    const account = this.accounts.name(accountId);
    if (account === null) return null;
    if (kind === 'wireguard') {
      const text = this.settings.wireguard().enable ? this.accounts.configText(accountId) : null;
      return text === null ? null : { filename: wgQuickFilename(account), contentType: 'text/plain; charset=utf-8', body: text };
    }
    if (!this.settings.ikev2().enable) return null;
    return kind === 'ca' ? this.ikev2.caCertificate(account) : this.ikev2.profile(account);
  }
}

/**
 * A file name wg-quick accepts as an interface name (`[a-zA-Z0-9_=+.-]{1,15}`) plus `.conf`, from the account
 * name (already letters, digits, `_`, `-`), cut to 15 characters.
 */
export function wgQuickFilename(account: string): string {
  const base = account.replace(/[^a-zA-Z0-9_=+.-]/g, '').slice(0, 15) || 'wg0';
  return `${base}.conf`;
}
