// Typed HTTP client of one VPN panel: an undici Pool (keep-alive, timeouts), the access_hash cookie, form bodies,
// every answer parsed with the panel's own zod schemas; panel errors surface verbatim as PanelError.
import { Pool, errors as undiciErrors } from 'undici';
import { z } from 'zod';
import {
  AccountListSchema, AccountSchema, AvailableIpsSchema, envelopeSchema, OtlListSchema, PANEL_ERRORS, PANEL_OWN_ERRORS, SuccessSchema, SystemStatusSchema,
  TrafficStatisticsSchema, WireguardServerMapSchema, WireguardServerSchema,
  type Account, type SystemStatus, type TrafficStatisticsEntry, type WireguardServer,
} from './wire-schemas.ts';

/** An error answered by the panel; `message` is the panel's `error` text byte for byte. */
export class PanelError extends Error {
  constructor(message: string, readonly httpStatus?: number) {
    super(message);
    this.name = 'PanelError';
  }
}

/** The panel could not be reached (connect, timeout, reset); message `cannot reach panel: <cause>`. */
export class PanelUnreachableError extends PanelError {
  constructor(cause: string) {
    super(`cannot reach panel: ${cause}`);
    this.name = 'PanelUnreachableError';
  }
}

export const ACCOUNT_NOT_FOUND = PANEL_ERRORS.ACCOUNT_NOT_FOUND;
export const NAME_IN_USE = PANEL_ERRORS.NAME_IN_USE;
export const USERNAME_IN_USE = PANEL_ERRORS.USERNAME_IN_USE;
export const IP_IN_USE = PANEL_ERRORS.IP_IN_USE;
export const ACCOUNT_LIMIT_EXCEEDED = PANEL_ERRORS.ACCOUNT_LIMIT_EXCEEDED;
export const IKEV2_NOT_ENABLED = PANEL_OWN_ERRORS.IKE_NOT_ENABLED;
export const IKEV2_SERVER_NOT_ENABLED = PANEL_OWN_ERRORS.IKE_SERVER_NOT_ENABLED;
const OTL_NOT_FOUND = PANEL_OWN_ERRORS.OTL_NOT_FOUND;

/** The panel refused an IKEv2 profile because IKEv2 is off (no CA/server certificate, or not on the account's server). */
export function isIkev2Off(err: unknown): boolean {
  return err instanceof PanelError && (err.message === IKEV2_NOT_ENABLED || err.message === IKEV2_SERVER_NOT_ENABLED);
}

export interface PanelClientOptions {
  /** `{base_url}` or the API root `{base_url}/api/v1`. */
  apiUrl: string;
  accessHash: string;
  /** Sockets kept per panel (default 16). */
  connections?: number;
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

type Params = Record<string, string | number | boolean | undefined>;

/** Parameters of POST /account. */
export interface CreateAccountParams {
  wg_name: string;
  allowed_IPs: string;
  name?: string;
  status?: 'enable' | 'disable';
  username?: string;
  password?: string;
  b_download?: number;
  b_upload?: number;
}

/** Parameters of PUT /account/<name>. */
export interface UpdateAccountParams {
  status?: 'enable' | 'disable';
  password?: string;
  allowed_IPs?: string;
  b_download?: number;
  b_upload?: number;
}

/** Client of the panel REST API (`/api/v1`). One instance per panel; share it, it pools connections. */
export class PanelClient {
  private readonly pool: Pool;
  private readonly root: string;
  private readonly cookie: string;

  constructor(opts: PanelClientOptions) {
    const url = new URL(opts.apiUrl);
    const path = url.pathname.replace(/\/+$/, '');
    this.root = /\/api\/v1$/.test(path) ? path : `${path}/api/v1`;
    this.cookie = `access_hash=${encodeURIComponent(opts.accessHash)}`;
    this.pool = new Pool(url.origin, {
      connections: opts.connections ?? 16,
      keepAliveTimeout: 30_000,
      connect: { timeout: opts.connectTimeoutMs ?? 5_000 },
      headersTimeout: opts.headersTimeoutMs ?? 30_000,
      bodyTimeout: opts.bodyTimeoutMs ?? 30_000,
    });
  }

  systemStatus(signal?: AbortSignal): Promise<SystemStatus> {
    return this.call('GET', '/system/status', SystemStatusSchema, undefined, signal);
  }

  getAccount(name: string, signal?: AbortSignal): Promise<Account> {
    return this.call('GET', `/account/${encodeURIComponent(name)}`, AccountSchema, undefined, signal);
  }

  /** The account, or null when the panel answers `Account not found`. */
  async findAccount(name: string, signal?: AbortSignal): Promise<Account | null> {
    try {
      return await this.getAccount(name, signal);
    } catch (err) {
      if (err instanceof PanelError && err.message === ACCOUNT_NOT_FOUND) return null;
      throw err;
    }
  }

  listAccounts(signal?: AbortSignal): Promise<Account[]> {
    return this.call('GET', '/account', AccountListSchema, undefined, signal);
  }

  createAccount(params: CreateAccountParams, signal?: AbortSignal): Promise<Account> {
    return this.call('POST', '/account', AccountSchema, params as unknown as Params, signal);
  }

  updateAccount(name: string, params: UpdateAccountParams, signal?: AbortSignal): Promise<Account> {
    return this.call('PUT', `/account/${encodeURIComponent(name)}`, AccountSchema, params as unknown as Params, signal);
  }

  async deleteAccount(name: string, signal?: AbortSignal): Promise<void> {
    await this.call('DELETE', `/account/${encodeURIComponent(name)}`, SuccessSchema, undefined, signal);
  }

  /** GET /account/<name>/config_text: the peer's WireGuard configuration. */
  configText(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/config_text`, z.string(), undefined, signal);
  }

  /** GET /account/<name>/config_qr: base64 PNG of the configuration's QR code. */
  configQr(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/config_qr`, z.string(), undefined, signal);
  }

  /** GET /account/<name>/ikev2_profile: the IKEv2 profile of the strongSwan Android app (`.sswan` JSON text). */
  ikev2Profile(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/ikev2_profile`, z.string(), undefined, signal);
  }

  /** GET /account/<name>/ikev2_mobileconfig (extension): the IKEv2 profile for iOS/macOS (Apple configuration profile XML). */
  ikev2Mobileconfig(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/ikev2_mobileconfig`, z.string(), undefined, signal);
  }

  /** GET /account/<name>/ikev2_windows (extension): PowerShell script setting up Windows' built-in IKEv2 client. */
  ikev2Windows(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/ikev2_windows`, z.string(), undefined, signal);
  }

  /** GET /account/<name>/otl: URL of a new one-time link (`{base_url}/otl/<key>`). */
  oneTimeLink(name: string, signal?: AbortSignal): Promise<string> {
    return this.call('GET', `/account/${encodeURIComponent(name)}/otl`, z.string(), undefined, signal);
  }

  /** GET /otl/list: the listed keys (not the link keys) of the live one-time links of `account`. */
  async liveLinkKeys(account: string, signal?: AbortSignal): Promise<string[]> {
    const list = await this.call('GET', '/otl/list', OtlListSchema, undefined, signal);
    return Object.values(list.olts).filter((entry) => entry.account === account).map((entry) => entry.key);
  }

  /** DELETE /otl/<key> (extension): revokes a live link by its listed key; false when the panel no longer has it. */
  async revokeLink(listedKey: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.call('DELETE', `/otl/${encodeURIComponent(listedKey)}`, SuccessSchema, undefined, signal);
      return true;
    } catch (err) {
      if (err instanceof PanelError && err.message === OTL_NOT_FOUND) return false;
      throw err;
    }
  }

  /** GET /wireguard/online: the peers with a recent handshake (only their number is read). */
  async onlinePeerCount(signal?: AbortSignal): Promise<number> {
    return (await this.call('GET', '/wireguard/online', z.array(z.unknown()), undefined, signal)).length;
  }

  /** GET /otl/config: resolves when the panel offers one-time links (any answer body), rejects otherwise. */
  async otlConfig(signal?: AbortSignal): Promise<void> {
    await this.call('GET', '/otl/config', z.unknown(), undefined, signal);
  }

  /** GET /account/<name>/traffic_statistics/<YEAR>/<MONTH>: one entry per day. */
  trafficStatistics(name: string, year: number, month: number, signal?: AbortSignal): Promise<TrafficStatisticsEntry[]> {
    const mm = String(month).padStart(2, '0');
    return this.call('GET', `/account/${encodeURIComponent(name)}/traffic_statistics/${year}/${mm}`, TrafficStatisticsSchema, undefined, signal);
  }

  /**
   * GET /traffic_statistics?from=&to=: every account's stored days from `from` to `to` (`YYYY-MM-DD`; `to` default the
   * panel's today), days without traffic left out: the whole panel's usage in one request (the data-cap pass).
   */
  trafficRange(from: string, to?: string, signal?: AbortSignal): Promise<TrafficStatisticsEntry[]> {
    const query = new URLSearchParams({ from, ...(to ? { to } : {}) });
    return this.call('GET', `/traffic_statistics?${query}`, TrafficStatisticsSchema, undefined, signal);
  }

  listServers(signal?: AbortSignal): Promise<Record<string, WireguardServer>> {
    return this.call('GET', '/wireguard', WireguardServerMapSchema, undefined, signal);
  }

  getServer(name: string, signal?: AbortSignal): Promise<WireguardServer> {
    return this.call('GET', `/wireguard/${encodeURIComponent(name)}`, WireguardServerSchema, undefined, signal);
  }

  availableIps(server: string, signal?: AbortSignal): Promise<string[]> {
    return this.call('GET', `/wireguard/${encodeURIComponent(server)}/available_ips`, AvailableIpsSchema, undefined, signal);
  }

  /** Closes the pool's sockets. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** One request; resolves with `msg` parsed by `schema`, rejects with PanelError carrying the panel's text. */
  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, schema: z.ZodType<T>, params?: Params, signal?: AbortSignal): Promise<T> {
    const body = params ? formEncode(params) : undefined;
    let statusCode: number;
    let text: string;
    try {
      const res = await this.pool.request({
        method,
        path: this.root + path,
        headers: {
          cookie: this.cookie,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body,
        signal,
      });
      statusCode = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
      throw new PanelUnreachableError(describe(err));
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PanelError(`unexpected answer from panel: HTTP ${statusCode}, not JSON`, statusCode);
    }
    const answer = envelopeSchema(schema).safeParse(json);
    if (answer.success) {
      if (answer.data.status === 'error') throw new PanelError(answer.data.error, statusCode);
      return answer.data.msg as T;
    }
    const error = (json as { error?: unknown } | null)?.error;
    if (typeof error === 'string' && error !== '') throw new PanelError(error, statusCode);
    const issue = answer.error.issues[0];
    throw new PanelError(`unexpected answer from panel: HTTP ${statusCode}${issue ? `, ${issue.path.join('.') || 'body'}: ${issue.message}` : ''}`, statusCode);
  }
}

function formEncode(params: Params): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.append(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  return form.toString();
}

function describe(err: unknown): string {
  if (err instanceof undiciErrors.ConnectTimeoutError) return 'connect timeout';
  if (err instanceof undiciErrors.HeadersTimeoutError) return 'timeout waiting for the answer';
  if (err instanceof undiciErrors.BodyTimeoutError) return 'timeout reading the answer';
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  return code && !e.message.includes(code) ? `${code} ${e.message}` : e.message || String(err);
}
