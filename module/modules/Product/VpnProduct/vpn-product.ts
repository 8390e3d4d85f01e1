// The VPN product: sells WireGuard accounts on a registered panel; jobs create, suspend, resume, re-plan and delete them.
import type { z } from 'zod';
import type { ClientAreaMenu } from '../../../contract/client-area.ts';
import type { ModuleRequest, ModuleResponse } from '../../../contract/http.ts';
import type { PlatformContext } from '../../../contract/platform-context.ts';
import { Product } from '../../../contract/product.ts';
import type { JobMethod } from '../../../contract/provision-status.ts';
import { jobError, jobSuccess, type JobResult } from '../../../contract/result.ts';
import type { TaskOptions } from '../../../task/queue.ts';
import {
  clientTabPath, configFilename, connectData, IKEV2_PROFILES, ikev2Filename, manageData, overviewData, usageData, VPN_CLIENT_TABS,
  type Ikev2Platform, type TabSource,
} from './client-tabs.ts';
import { createAccountIdempotent } from './create-account.ts';
import { DEFAULT_LINK_BOUND, LINK_REPLACES, linkBoundSchema, newClientLink } from './link-bound.ts';
import { ACCOUNT_LIMIT_EXCEEDED, isIkev2Off, PanelError, type PanelClient } from './panel-client.ts';
import { VPN_JOB_DEFAULTS, vpnProductManifest, type VpnProductServices } from './manifest.ts';
import { deleteAccountIfPresent, moveAccount } from './move-account.ts';
import type { PanelRegistry } from './panel-registry.ts';
import type { Placement } from './placement.ts';
import { regenerateAccountKeys } from './rekey.ts';
import { panelOf, pendingPlacementSchema, provisionSchema, type MoveTarget, type VpnProvisionData } from './provision.ts';
import { accountNameFor, vpnProductSchema, vpnServiceSchema } from './schemas.ts';
import { CAP_LIFT_JOB, CAP_THROTTLE_JOB } from './caps/cap-pass.ts';
import { capPolicyOf } from './caps/cap-policy.ts';
import { capView } from './caps/cap-view.ts';
import { attachment, postOnly, wantsHtml } from './http-answers.ts';
import { USERNAME_TAKEN, type UsernameDirectory } from './usernames.ts';

/** What the host adds to this module's context: the services of its manifest. */
export type VpnProductContext = PlatformContext & VpnProductServices;

export type { VpnProvisionData } from './provision.ts';

const NOT_PROVISIONED = 'Service has no panel account yet';
const REGENERATE_KEYS_JOB = 'regenerateKeysJob';
export const IKEV2_UNAVAILABLE = 'IKEv2 is not available for this service.';

/** Product module `VpnProduct`. */
export class VpnProduct extends Product {
  static override version = '1.0.0';
  /** Config schema, panels table, panel registry, username directory and panel routes (./manifest.ts). */
  static manifest = vpnProductManifest;
  private readonly panels: PanelRegistry;
  private readonly placement: Placement;
  private readonly usernames: UsernameDirectory | null;

  constructor(ctx: PlatformContext) {
    super(ctx);
    const own = ctx as Partial<VpnProductContext>;
    if (!own.panels) throw new Error('VpnProduct needs the panel registry of its manifest in its context');
    this.panels = own.panels;
    this.placement = own.placement!;
    this.usernames = own.usernames ?? null;
  }

  override jobOptions(_method: JobMethod): TaskOptions {
    const configured = (this.config<Partial<TaskOptions>>('job') ?? {}) as Partial<TaskOptions>;
    return { ...VPN_JOB_DEFAULTS, ...configured };
  }

  protected override productSchema(): z.ZodType<Record<string, unknown>> {
    return vpnProductSchema(() => this.panels.locations());
  }

  /** Service data; a username another live service holds on the same panel location is refused (422, `username`). */
  protected override serviceSchema(): z.ZodType<Record<string, unknown>> {
    const usernames = this.usernames;
    if (!usernames) return vpnServiceSchema;
    const location = String(this.product_data.server_location ?? '');
    return vpnServiceSchema.superRefine(async (data, issues) => {
      if (await usernames.taken(location, data.username, this.service_uuid)) issues.addIssue({ code: 'custom', path: ['username'], message: USERNAME_TAKEN });
    });
  }

  override getServiceData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const out = super.getServiceData(data);
    delete out.domain;
    return out;
  }

  /**
   * Creates (or adopts, on a retry) the service's panel account and stores where it lives. The panel is chosen among
   * those serving the product's location (most free accounts, never a down one) and recorded before the account is
   * created, so a retry goes back to the same panel.
   */
  async createJob(): Promise<JobResult> {
    const uuid = this.requireService();
    const location = String(this.product_data.server_location ?? '');
    const { panel, placed } = await this.placeFor(location);
    const client = await this.panels.client(panel);
    const server = await this.serverName(panel, client);
    const bandwidth = Number(this.product_data.bandwidth);
    const name = accountNameFor(uuid);
    const username = String(this.service_data.username ?? '');
    let account;
    try {
      account = await createAccountIdempotent({
        client,
        addresses: this.panels.addresses,
        poolKey: `${panel}/${server}`,
        signal: this.abortSignal,
        params: {
          wg_name: server, name, username, password: String(this.service_data.password ?? ''), status: 'enable',
          b_download: bandwidth, b_upload: bandwidth,
        },
      });
    } catch (err) {
      if (!(placed && err instanceof PanelError && err.message === ACCOUNT_LIMIT_EXCEEDED)) throw err;
      // The panel is full (it checks the limit before the name): an earlier attempt's account is adopted; without one
      // the placement is dropped, so the next attempt places the service again.
      const existing = await client.findAccount(name, this.abortSignal);
      if (!existing || existing.username !== username) {
        await this.saveProvisionData({});
        throw err;
      }
      account = existing;
    }
    const data: VpnProvisionData = { account_name: account.name, wg_server: account.wg_name, address: account.allowed_IPs, panel_location: location, panel };
    await this.saveProvisionData({ ...data });
    return jobSuccess();
  }

  /**
   * The panel already holding this service's account at `location` (a re-run create), else the placement recorded by
   * an earlier attempt, else a new placement, recorded first; `placed` is false for an existing account.
   */
  private async placeFor(location: string): Promise<{ panel: string; placed: boolean }> {
    const stored = await this.getProvisionData();
    const provisioned = provisionSchema.safeParse(stored);
    if (provisioned.success && provisioned.data.panel_location === location) return { panel: panelOf(provisioned.data), placed: false };
    const pending = pendingPlacementSchema.safeParse(stored);
    if (pending.success && pending.data.placement.location === location) return { panel: pending.data.placement.panel, placed: true };
    const panel = await this.placement.choose(location, this.abortSignal);
    await this.saveProvisionData({ placement: { panel, location } });
    this.logDebug('placement', { location }, { panel });
    return { panel, placed: true };
  }

  async suspendJob(): Promise<JobResult> {
    return this.updateAccount('suspend', { status: 'disable' });
  }

  async unsuspendJob(): Promise<JobResult> {
    return this.updateAccount('unsuspend', { status: 'enable' });
  }

  /** Deletes the account; an account the panel no longer has counts as deleted. */
  async terminationJob(): Promise<JobResult> {
    const provision = await this.provision();
    if (!provision) return jobSuccess('no panel account to delete');
    await deleteAccountIfPresent(await this.panels.client(panelOf(provision)), provision.account_name, this.abortSignal);
    return jobSuccess();
  }

  /**
   * Re-plans the account for the service's (new) product: on the same location and server only its bandwidth
   * changes; to another location or server the account moves (./move-account.ts), the target recorded first so a
   * retry finishes the same move.
   */
  async change_packageJob(): Promise<JobResult> {
    const bandwidth = Number(this.product_data.bandwidth);
    const provision = await this.provision();
    if (!provision) return jobError(NOT_PROVISIONED);
    let target = provision.move ?? null;
    if (!target) {
      target = await this.moveTarget(provision);
      if (!target) return this.updateAccount('change_package', { b_download: bandwidth, b_upload: bandwidth });
      await this.saveProvisionData({ ...provision, move: target });
    }
    const service = await this.ctx.services.get(this.requireService());
    const moved = await moveAccount({
      client: (panel) => this.panels.client(panel),
      addresses: this.panels.addresses,
      current: provision,
      target,
      signal: this.abortSignal,
      account: {
        name: accountNameFor(this.requireService()),
        username: String(this.service_data.username ?? ''),
        password: String(this.service_data.password ?? ''),
        status: service?.provision_status === 'suspended' ? 'disable' : 'enable',
        bandwidth,
      },
    });
    await this.saveProvisionData({ ...moved });
    this.logInfo('change_package', { from: { panel: panelOf(provision), wg_server: provision.wg_server } }, { panel: moved.panel, wg_server: moved.wg_server, address: moved.address });
    return jobSuccess();
  }

  /** Where the new product puts the account, or null when it stays (same location and server). */
  private async moveTarget(provision: VpnProvisionData): Promise<MoveTarget | null> {
    const location = String(this.product_data.server_location ?? '');
    if (location === provision.panel_location) {
      const panel = panelOf(provision);
      const server = await this.serverName(panel, await this.panels.client(panel));
      return server === provision.wg_server ? null : { panel, location, wg_server: server };
    }
    const panel = await this.placement.choose(location, this.abortSignal);
    return { panel, location, wg_server: await this.serverName(panel, await this.panels.client(panel)) };
  }

  override serviceJobMethods(): readonly string[] {
    return [REGENERATE_KEYS_JOB, CAP_THROTTLE_JOB, CAP_LIFT_JOB];
  }

  /** Data cap used up (action `throttle`): the account's rate down to the plan's `cap_throttle_mbit`, both ways. */
  async capThrottleJob(): Promise<JobResult> {
    const rate = capPolicyOf(this.product_data).throttle_mbit;
    return this.updateAccount('cap_throttle', { b_download: rate, b_upload: rate });
  }

  /** The period renewed (or the cap was raised): the account's rate back to the plan's bandwidth. */
  async capLiftJob(): Promise<JobResult> {
    const bandwidth = Number(this.product_data.bandwidth);
    return this.updateAccount('cap_lift', { b_download: bandwidth, b_upload: bandwidth });
  }

  /**
   * Gives the account a new key pair (re-created on its panel under the same name and address; the old configuration
   * stops working). The old public key is recorded first so a retry knows whether the re-creation happened.
   */
  async regenerateKeysJob(): Promise<JobResult> {
    const provision = await this.provision();
    if (!provision) return jobError(NOT_PROVISIONED);
    const client = await this.panels.client(panelOf(provision));
    let oldPublicKey = provision.rekey_from;
    if (!oldPublicKey) {
      oldPublicKey = (await client.getAccount(provision.account_name, this.abortSignal)).public_key;
      await this.saveProvisionData({ ...provision, rekey_from: oldPublicKey });
    }
    const record = await this.ctx.services.get(this.requireService());
    const account = await regenerateAccountKeys({
      client, addresses: this.panels.addresses, panel: panelOf(provision), provision, oldPublicKey, signal: this.abortSignal,
      account: {
        username: String(this.service_data.username ?? ''), password: String(this.service_data.password ?? ''),
        status: record?.provision_status === 'suspended' ? 'disable' : 'enable', bandwidth: Number(this.product_data.bandwidth),
      },
    });
    const { rekey_from: _done, ...rest } = provision;
    await this.saveProvisionData({ ...rest, address: account.allowed_IPs });
    this.logInfo('regenerate_keys', { account: provision.account_name }, { public_key: account.public_key });
    return jobSuccess();
  }

  override getClientAreaMenuConfig(): ClientAreaMenu {
    return VPN_CLIENT_TABS;
  }

  async variables_overview(): Promise<Record<string, unknown>> {
    return { ...overviewData(await this.tabSource()) };
  }

  async variables_connect(): Promise<Record<string, unknown>> {
    return { ...(await connectData(await this.tabSource())) };
  }

  async variables_usage(): Promise<Record<string, unknown>> {
    return this.usageWithCap();
  }

  async variables_manage(): Promise<Record<string, unknown>> {
    return { ...manageData(await this.tabSource()) };
  }

  async controllerClient_overviewGet(_request: ModuleRequest): Promise<unknown> {
    return overviewData(await this.tabSource());
  }

  async controllerClient_connectGet(_request: ModuleRequest): Promise<unknown> {
    return connectData(await this.tabSource());
  }

  /** The WireGuard configuration as a file named after the service. */
  async controllerClient_connectDownload(_request: ModuleRequest): Promise<ModuleResponse> {
    const provision = await this.requireProvision();
    const text = await (await this.panels.client(panelOf(provision))).configText(provision.account_name, this.abortSignal);
    return attachment(text, configFilename(this.service_data), 'text/plain; charset=utf-8');
  }

  /** The IKEv2 profile of the strongSwan Android app (`.sswan` JSON) as a file. */
  async controllerClient_connectIkev2(_request: ModuleRequest): Promise<ModuleResponse> {
    return this.ikev2Download('android');
  }

  /** The IKEv2 profile of iPhone, iPad and Mac (Apple configuration profile, `.mobileconfig`) as a file. */
  async controllerClient_connectIkev2Apple(_request: ModuleRequest): Promise<ModuleResponse> {
    return this.ikev2Download('apple');
  }

  /** The PowerShell script setting up Windows' built-in IKEv2 client (`.ps1`) as a file. */
  async controllerClient_connectIkev2Windows(_request: ModuleRequest): Promise<ModuleResponse> {
    return this.ikev2Download('windows');
  }

  /**
   * A new one-time link to open the configuration on another device (POST): the service's only live link (earlier ones
   * are revoked), one at a time, at most `otl_links.limit` per `otl_links.window_minutes` (429 with the wait beyond that).
   */
  async controllerClient_connectOtl(request: ModuleRequest): Promise<unknown> {
    if (request.method !== 'POST') return postOnly();
    const provision = await this.requireProvision();
    const issues = (this.ctx as Partial<VpnProductContext>).linkIssues;
    if (!issues) throw new Error('one-time links are made on the platform process');
    const answer = await newClientLink({
      issues, serviceUuid: this.requireService(), bound: linkBoundSchema.parse(this.config('otl_links') ?? DEFAULT_LINK_BOUND),
      account: provision.account_name, client: () => this.panels.client(panelOf(provision)), signal: this.abortSignal,
    });
    const html = wantsHtml(request);
    const page = (data: Record<string, unknown>) => this.view('client.otl-link', { ...data, back_href: clientTabPath(this.requireService(), 'connect') });
    if (!answer.made) {
      const headers = { 'retry-after': String(answer.retryAfterS), 'cache-control': 'no-store', ...(html ? { 'content-type': 'text/html; charset=utf-8' } : {}) };
      return { status: 429, body: html ? page({ message: answer.message }) : { success: false, message: answer.message }, headers };
    }
    if (answer.failed > 0) this.logError('one_time_link', { account: provision.account_name }, { revoked: answer.revoked, not_revoked: answer.failed });
    if (!html) return { url: answer.url, note: LINK_REPLACES };
    return { status: 200, body: page({ url: answer.url, note: LINK_REPLACES }), headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } };
  }

  async controllerClient_usageGet(_request: ModuleRequest): Promise<unknown> {
    return this.usageWithCap();
  }

  /** The Usage tab: daily traffic and the cap bar (used / allowance, percent, days left; null for an unlimited plan). */
  private async usageWithCap(): Promise<Record<string, unknown>> {
    const cap = await capView(this.requireService(), this.product_data, (this.ctx as Partial<VpnProductContext>).capStore ?? null, this.ctx.clock);
    return { ...(await usageData(await this.tabSource())), cap };
  }

  /** Queues regenerateKeysJob (POST; the client area lets only the service's owner reach it). */
  async controllerClient_manageRegenerate(request: ModuleRequest): Promise<unknown> {
    if (request.method !== 'POST') return postOnly();
    await this.requireProvision();
    const taskId = await this.queueServiceJob(REGENERATE_KEYS_JOB, 'regenerate_keys', this.jobOptions('createJob'));
    if (wantsHtml(request)) return { status: 303, body: '', headers: { location: clientTabPath(this.requireService(), 'manage'), 'content-type': 'text/plain; charset=utf-8' } };
    return { queued: true, task_id: taskId };
  }

  /** An IKEv2 profile of the account as a file; 404 `IKEV2_UNAVAILABLE` when the panel has IKEv2 off for it. */
  private async ikev2Download(platform: Ikev2Platform): Promise<ModuleResponse> {
    const provision = await this.requireProvision();
    const kind = IKEV2_PROFILES[platform];
    let text: string;
    try {
      text = await kind.fetch(await this.panels.client(panelOf(provision)), provision.account_name, this.abortSignal);
    } catch (err) {
      if (isIkev2Off(err)) return { status: 404, body: { success: false, message: IKEV2_UNAVAILABLE } };
      throw err;
    }
    return attachment(text, ikev2Filename(this.service_data, platform), kind.contentType);
  }

  private async tabSource(): Promise<TabSource> {
    const uuid = this.requireService();
    const record = await this.ctx.services.get(uuid);
    const provision = record && record.provision_status !== 'terminated' ? await this.provision(record.provision_data) : null;
    return {
      serviceUuid: uuid, status: record?.provision_status ?? 'pending', product: this.product_data, service: this.service_data, provision,
      createdAt: record?.created_at ?? null,
      client: () => this.panels.client(panelOf(provision!)), clock: this.ctx.clock, signal: this.abortSignal,
    };
  }

  private async requireProvision(): Promise<VpnProvisionData> {
    const provision = await this.provision();
    if (!provision) throw new Error(NOT_PROVISIONED);
    return provision;
  }

  private async updateAccount(action: string, params: { status?: 'enable' | 'disable'; b_download?: number; b_upload?: number }): Promise<JobResult> {
    const provision = await this.provision();
    if (!provision) return jobError(NOT_PROVISIONED);
    const account = await (await this.panels.client(panelOf(provision))).updateAccount(provision.account_name, params, this.abortSignal);
    this.logDebug(action, params, { name: account.name, status: account.status, b_download: account.b_download });
    return jobSuccess();
  }

  private async provision(data?: Record<string, unknown>): Promise<VpnProvisionData | null> {
    this.requireService();
    const parsed = provisionSchema.safeParse(data ?? await this.getProvisionData());
    return parsed.success ? parsed.data : null;
  }

  /** The product's `wg_server`, else the panel's first server (looked up once per 300 s). */
  private async serverName(panel: string, client: PanelClient): Promise<string> {
    const configured = this.product_data.wg_server;
    if (typeof configured === 'string' && configured) return configured;
    return this.cached(`first-server:${panel}`, async () => {
      const names = Object.keys(await client.listServers(this.abortSignal)).sort();
      if (names.length === 0) throw new Error(`panel at ${panel} has no WireGuard server`);
      return names[0];
    });
  }

  private requireService(): string {
    if (!this.service_uuid) throw new Error('no current service');
    return this.service_uuid;
  }
}
