// VpnProduct's client-area tabs: the menu and the data of each tab (overview, connect, usage, manage), read from the
// service and its panel; the module's variables_<tab>() and controllerClient_<tab><Method>() answer these.
import type { ClientAreaMenu } from '../../../contract/client-area.ts';
import type { Clock } from '../../../../shared/clock.ts';
import { humanBytes } from './caps/cap-view.ts';
import type { PanelClient } from './panel-client.ts';
import type { VpnProvisionData } from './provision.ts';

/**
 * The tabs, in display order; templates under views/modules/Product/VpnProduct/client/. The overview shows only what the
 * store holds (status, product, service and provision data), so the host may reuse it while the store is unchanged
 * (`cache: 'store'`); connect, usage and manage read the panel or the clock.
 */
export const VPN_CLIENT_TABS: ClientAreaMenu = {
  overview: { name: 'Overview', template: 'client.overview', cache: 'store' },
  connect: { name: 'Connect', template: 'client.connect' },
  usage: { name: 'Usage', template: 'client.usage' },
  manage: { name: 'Manage', template: 'client.manage' },
};

export const NOT_READY = 'Your VPN is being set up. This tab fills in once it is ready.';
const NO_STATISTICS = 'Usage statistics are not available on this server yet.';

/** The client area's AJAX path of a tab handler (the web host's `/client/services/<uuid>/ajax/<tab>/<method>`). */
function clientAjaxPath(serviceUuid: string, tab: string, method: string): string {
  return `/client/services/${encodeURIComponent(serviceUuid)}/ajax/${tab}/${method}`;
}

/** The client area's page of a service's tab (`/client/services/<uuid>?tab=<tab>`). */
export function clientTabPath(serviceUuid: string, tab: string): string {
  return `/client/services/${encodeURIComponent(serviceUuid)}?tab=${tab}`;
}

/** What the tabs read: the bound service, its product, its provision data and its panel's client. */
export interface TabSource {
  serviceUuid: string;
  status: string;
  product: Record<string, unknown>;
  service: Record<string, unknown>;
  provision: VpnProvisionData | null;
  /** When the service was created (ISO time), if the store says. */
  createdAt?: string | null;
  /** Client of the panel holding the account (only called when `provision` is set). */
  client(): Promise<PanelClient>;
  clock: Clock;
  signal?: AbortSignal;
}

export interface OverviewData {
  service_uuid: string;
  status: string;
  location: string;
  plan: string;
  bandwidth_mbit: number | null;
  username: string;
  address: string | null;
  server: string | null;
}

export function overviewData(src: TabSource): OverviewData {
  const bandwidth = Number(src.product.bandwidth);
  return {
    service_uuid: src.serviceUuid,
    status: src.status,
    location: String(src.provision?.panel_location ?? src.product.server_location ?? ''),
    plan: String(src.product.plan_type ?? ''),
    bandwidth_mbit: Number.isFinite(bandwidth) && bandwidth > 0 ? bandwidth : null,
    username: String(src.service.username ?? ''),
    address: src.provision ? src.provision.address.replace(/\/32$/, '') : null,
    server: src.provision?.wg_server ?? null,
  };
}

/** Stem of the downloaded files: the service's username (letters, digits, `_`, `-`; 15 characters, as WireGuard names
 * the interface after the file), else `vpn`. */
function fileStem(service: Record<string, unknown>): string {
  return String(service.username ?? '').replace(/[^A-Za-z0-9_-]/g, '').slice(0, 15) || 'vpn';
}

/** Name of the downloaded WireGuard file: `<stem>.conf`. */
export function configFilename(service: Record<string, unknown>): string {
  return `${fileStem(service)}.conf`;
}

/** One IKEv2 profile the connect tab offers: who it is for, its file, and the panel route answering its text. */
export interface Ikev2ProfileKind {
  /** `<method>` of `/ajax/connect/<method>` (handler `controllerClient_connect<Method>`). */
  method: string;
  label: string;
  extension: string;
  contentType: string;
  /** A line under the download, and the command it names (given the file name). */
  hint: { text: string; command: (filename: string) => string } | null;
  fetch(client: PanelClient, account: string, signal?: AbortSignal): Promise<string>;
}

/** The IKEv2 profiles, in display order: strongSwan's Android app, Apple's configuration profile, a Windows script. */
export const IKEV2_PROFILES = {
  android: {
    method: 'ikev2', label: 'Android (strongSwan app)', extension: 'sswan', contentType: 'application/vnd.strongswan.profile', hint: null,
    fetch: (client, account, signal) => client.ikev2Profile(account, signal),
  },
  apple: {
    method: 'ikev2Apple', label: 'iPhone, iPad and Mac', extension: 'mobileconfig', contentType: 'application/x-apple-aspen-config', hint: null,
    fetch: (client, account, signal) => client.ikev2Mobileconfig(account, signal),
  },
  windows: {
    method: 'ikev2Windows', label: 'Windows', extension: 'ps1', contentType: 'text/plain; charset=utf-8',
    hint: { text: 'Run it in an elevated PowerShell (Run as administrator):', command: (filename) => `powershell -ExecutionPolicy Bypass -File .\\${filename}` },
    fetch: (client, account, signal) => client.ikev2Windows(account, signal),
  },
} as const satisfies Record<string, Ikev2ProfileKind>;

export type Ikev2Platform = keyof typeof IKEV2_PROFILES;

/** Name of a downloaded IKEv2 profile: `<stem>.sswan`, `<stem>.mobileconfig` or `<stem>.ps1`. */
export function ikev2Filename(service: Record<string, unknown>, platform: Ikev2Platform): string {
  return `${fileStem(service)}.${IKEV2_PROFILES[platform].extension}`;
}

/** A download link of the connect tab's IKEv2 section. */
export interface Ikev2Download {
  platform: Ikev2Platform;
  label: string;
  href: string;
  filename: string;
  hint: string | null;
  hint_command: string | null;
}

export interface ConnectData {
  service_uuid: string;
  ready: boolean;
  message: string | null;
  filename: string;
  config_text: string | null;
  /** `data:image/png;base64,...` of the configuration's QR code. */
  qr_data_url: string | null;
  download_href: string;
  /** The panel offers one-time links (GET /otl/config answers). */
  otl_available: boolean;
  otl_href: string;
  /** The panel offers IKEv2 for the account (its server has ikev2=1, the panel a CA and server certificate). */
  ikev2_available: boolean;
  /** One download per platform when `ikev2_available`, else empty. */
  ikev2_downloads: Ikev2Download[];
}

/** The IKEv2 downloads of a service (links to the client area's `connect/<method>` handlers). */
function ikev2Downloads(src: TabSource): Ikev2Download[] {
  return (Object.keys(IKEV2_PROFILES) as Ikev2Platform[]).map((platform) => {
    const kind: Ikev2ProfileKind = IKEV2_PROFILES[platform];
    const filename = ikev2Filename(src.service, platform);
    return {
      platform, label: kind.label, href: clientAjaxPath(src.serviceUuid, 'connect', kind.method), filename,
      hint: kind.hint?.text ?? null, hint_command: kind.hint?.command(filename) ?? null,
    };
  });
}

/** The connect tab: config text, QR, and what else the panel offers (one-time links, IKEv2 profiles). */
export async function connectData(src: TabSource): Promise<ConnectData> {
  const base = {
    service_uuid: src.serviceUuid, filename: configFilename(src.service),
    download_href: clientAjaxPath(src.serviceUuid, 'connect', 'download'),
    otl_href: clientAjaxPath(src.serviceUuid, 'connect', 'otl'),
  };
  if (!src.provision) {
    return { ...base, ready: false, message: NOT_READY, config_text: null, qr_data_url: null, otl_available: false, ikev2_available: false, ikev2_downloads: [] };
  }
  const client = await src.client();
  const name = src.provision.account_name;
  const [config, qr, otl, ikev2] = await Promise.all([
    client.configText(name, src.signal),
    client.configQr(name, src.signal),
    client.otlConfig(src.signal).then(() => true, () => false),
    // the profiles share their precondition: the panel answering one answers all three
    client.ikev2Profile(name, src.signal).then(() => true, () => false),
  ]);
  return {
    ...base, ready: true, message: null, config_text: config, qr_data_url: `data:image/png;base64,${qr}`, otl_available: otl,
    ikev2_available: ikev2, ikev2_downloads: ikev2 ? ikev2Downloads(src) : [],
  };
}

export interface UsageDay {
  /** `YYYY-MM-DD` (UTC); the template shows it in the reader's locale. */
  date: string;
  download: number;
  upload: number;
  /** The bytes in human units (`1.5 GB`). */
  download_text: string;
  upload_text: string;
}

export interface UsageMonth {
  /** `YYYY-MM`; the template shows it in the reader's locale. */
  label: string;
  days: UsageDay[];
  total_download: number;
  total_upload: number;
  total_download_text: string;
  total_upload_text: string;
}

export interface UsageData {
  service_uuid: string;
  available: boolean;
  message: string | null;
  /** The previous and the current month, oldest first, none before the service's creation. */
  months: UsageMonth[];
}

/** The current and the previous month (UTC) of `now`, oldest first; none before `since` (the service's creation). */
export function usageMonths(now: Date, since?: Date | null): Array<{ year: number; month: number }> {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  const previous = month === 1 ? { year: year - 1, month: 12 } : { year, month: month - 1 };
  const first = since && !Number.isNaN(since.getTime()) ? since.getUTCFullYear() * 12 + since.getUTCMonth() + 1 : -Infinity;
  return [previous, { year, month }].filter((m) => m.year * 12 + m.month >= first);
}

/** `YYYY-MM-DD` of a time (UTC), or null when it is not one. */
function dayOf(time: string | null | undefined): string | null {
  if (!time) return null;
  const at = new Date(time);
  return Number.isNaN(at.getTime()) ? null : at.toISOString().slice(0, 10);
}

/**
 * Daily traffic of the previous and current month from the panel's statistics, from the service's creation on (no
 * month or day before it), in bytes and human units; unavailable when the panel has none.
 */
export async function usageData(src: TabSource): Promise<UsageData> {
  const base = { service_uuid: src.serviceUuid };
  if (!src.provision) return { ...base, available: false, message: NOT_READY, months: [] };
  const client = await src.client();
  const name = src.provision.account_name;
  const firstDay = dayOf(src.createdAt);
  let months: UsageMonth[];
  try {
    months = await Promise.all(usageMonths(src.clock.now(), firstDay ? new Date(`${firstDay}T00:00:00Z`) : null).map(async ({ year, month }) => {
      const entries = await client.trafficStatistics(name, year, month, src.signal);
      const days = entries.filter((e) => !firstDay || e.date >= firstDay).map((e) => ({
        date: e.date, download: e.traffic_download, upload: e.traffic_upload,
        download_text: humanBytes(e.traffic_download), upload_text: humanBytes(e.traffic_upload),
      }));
      const total_download = days.reduce((sum, d) => sum + d.download, 0);
      const total_upload = days.reduce((sum, d) => sum + d.upload, 0);
      return {
        label: `${year}-${String(month).padStart(2, '0')}`, days, total_download, total_upload,
        total_download_text: humanBytes(total_download), total_upload_text: humanBytes(total_upload),
      };
    }));
  } catch {
    return { ...base, available: false, message: NO_STATISTICS, months: [] };
  }
  return { ...base, available: true, message: null, months };
}

export interface ManageData {
  service_uuid: string;
  ready: boolean;
  regenerate_href: string;
}

export function manageData(src: TabSource): ManageData {
  return { service_uuid: src.serviceUuid, ready: src.provision !== null, regenerate_href: clientAjaxPath(src.serviceUuid, 'manage', 'regenerate') };
}
