// The VPN product: sells WireGuard accounts on a registered panel; jobs create, suspend, resume, re-plan and delete them.
import { z } from 'zod';
import type { PlatformContext } from '../../../contract/platform-context.ts';
import { Product } from '../../../contract/product.ts';
import type { JobMethod } from '../../../contract/provision-status.ts';
import { jobError, jobSuccess, type JobResult } from '../../../contract/result.ts';
import type { TaskOptions } from '../../../task/queue.ts';
import { createAccountIdempotent } from './create-account.ts';
import { ACCOUNT_NOT_FOUND, PanelError, type PanelClient } from './panel-client.ts';
import { vpnProductManifest, type VpnProductServices } from './manifest.ts';
import type { PanelRegistry } from './panel-registry.ts';
import { accountNameFor, vpnProductSchema, vpnServiceSchema } from './schemas.ts';
import { USERNAME_TAKEN, type UsernameDirectory } from './usernames.ts';

/** What the host adds to this module's context: the services of its manifest. */
export type VpnProductContext = PlatformContext & VpnProductServices;

/** Job options unless config.ts says otherwise. */
export const VPN_JOB_DEFAULTS: TaskOptions = { tries: 5, backoff: 2, timeout: 60, maxExceptions: 5 };

/** Provision data stored on a service once its account exists. */
export interface VpnProvisionData {
  account_name: string;
  wg_server: string;
  address: string;
  panel_location: string;
}

const provisionSchema = z.object({
  account_name: z.string(),
  wg_server: z.string(),
  address: z.string(),
  panel_location: z.string(),
});

export const NOT_PROVISIONED = 'Service has no panel account yet';

/** Product module `VpnProduct`. */
export class VpnProduct extends Product {
  static override version = '1.0.0';
  /** Config schema, panels table, panel registry, username directory and panel routes (./manifest.ts). */
  static manifest = vpnProductManifest;
  private readonly panels: PanelRegistry;
  private readonly usernames: UsernameDirectory | null;

  constructor(ctx: PlatformContext) {
    super(ctx);
    const own = ctx as Partial<VpnProductContext>;
    if (!own.panels) throw new Error('VpnProduct needs the panel registry of its manifest in its context');
    this.panels = own.panels;
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
    return vpnServiceSchema.superRefine((data, issues) => {
      if (usernames.taken(location, data.username, this.service_uuid)) issues.addIssue({ code: 'custom', path: ['username'], message: USERNAME_TAKEN });
    });
  }

  override getServiceData(data: Record<string, unknown> = {}): Record<string, unknown> {
    const out = super.getServiceData(data);
    delete out.domain;
    return out;
  }

  /** Creates (or adopts, on a retry) the service's panel account and stores where it lives. */
  async createJob(): Promise<JobResult> {
    const uuid = this.requireService();
    const location = String(this.product_data.server_location ?? '');
    const client = await this.panels.client(location);
    const server = await this.serverName(location, client);
    const bandwidth = Number(this.product_data.bandwidth);
    const account = await createAccountIdempotent({
      client,
      addresses: this.panels.addresses,
      poolKey: `${location}/${server}`,
      signal: this.abortSignal,
      params: {
        wg_name: server,
        name: accountNameFor(uuid),
        username: String(this.service_data.username ?? ''),
        password: String(this.service_data.password ?? ''),
        status: 'enable',
        b_download: bandwidth,
        b_upload: bandwidth,
      },
    });
    const data: VpnProvisionData = { account_name: account.name, wg_server: account.wg_name, address: account.allowed_IPs, panel_location: location };
    await this.saveProvisionData({ ...data });
    return jobSuccess();
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
    try {
      await (await this.panels.client(provision.panel_location)).deleteAccount(provision.account_name, this.abortSignal);
    } catch (err) {
      if (!(err instanceof PanelError && err.message === ACCOUNT_NOT_FOUND)) throw err;
    }
    return jobSuccess();
  }

  /** Applies the bandwidth of the service's (new) product to its account. */
  async change_packageJob(): Promise<JobResult> {
    const bandwidth = Number(this.product_data.bandwidth);
    return this.updateAccount('change_package', { b_download: bandwidth, b_upload: bandwidth });
  }

  private async updateAccount(action: string, params: { status?: 'enable' | 'disable'; b_download?: number; b_upload?: number }): Promise<JobResult> {
    const provision = await this.provision();
    if (!provision) return jobError(NOT_PROVISIONED);
    const account = await (await this.panels.client(provision.panel_location)).updateAccount(provision.account_name, params, this.abortSignal);
    this.logDebug(action, params, { name: account.name, status: account.status, b_download: account.b_download });
    return jobSuccess();
  }

  private async provision(): Promise<VpnProvisionData | null> {
    this.requireService();
    const parsed = provisionSchema.safeParse(await this.getProvisionData());
    return parsed.success ? parsed.data : null;
  }

  /** The product's `wg_server`, else the panel's first server (looked up once per 300 s). */
  private async serverName(location: string, client: PanelClient): Promise<string> {
    const configured = this.product_data.wg_server;
    if (typeof configured === 'string' && configured) return configured;
    return this.cached(`first-server:${location}`, async () => {
      const names = Object.keys(await client.listServers(this.abortSignal)).sort();
      if (names.length === 0) throw new Error(`panel at ${location} has no WireGuard server`);
      return names[0];
    });
  }

  private requireService(): string {
    if (!this.service_uuid) throw new Error('no current service');
    return this.service_uuid;
  }
}
