// Live network-policy views: text views of a server or account (NAT, filter, mangle, tc) and the NAT/mangle listings.
import { ApiError, E } from '../http/errors.ts';
import type { MangleRule, NatRule } from '../schemas/firewall.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import type { PolicySync } from './firewall.ts';

/** Collaborators of the view service. */
export interface NetworkViewServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  sync: PolicySync;
}

/**
 * Read-only views straight from the data plane (`DataplaneSync.views`): what the kernel holds now, with its
 * counters, limited to what belongs to the server or account. The name is checked against the store first.
 */
export class NetworkViewService {
  constructor(private readonly deps: NetworkViewServiceDeps) {}

  /** GET /wireguard/<name>/firewall_nat_rules. */
  serverNatRules(name: string): Promise<string> {
    return this.deps.sync.views.natRules(this.requireServer(name).name);
  }

  /** GET /wireguard/<name>/firewall_filter_rules. */
  serverFilterRules(name: string): Promise<string> {
    return this.deps.sync.views.filterRules(this.requireServer(name).name);
  }

  /** GET /wireguard/<name>/traffic_control. */
  serverTrafficControl(name: string): Promise<string> {
    return this.deps.sync.views.serverTrafficControl(this.requireServer(name).name);
  }

  /** GET /account/<name>/firewall_mangle_rules. */
  accountMangleRules(name: string): Promise<string> {
    return this.deps.sync.views.mangleRules(this.requireAccount(name));
  }

  /** GET /account/<name>/traffic_control. */
  accountTrafficControl(name: string): Promise<string> {
    return this.deps.sync.views.accountTrafficControl(this.requireAccount(name));
  }

  /** GET /firewall/rules/nat: every server's live NAT rules (both families) with counters. */
  natList(): Promise<NatRule[]> {
    return this.deps.sync.views.natList();
  }

  /**
   * GET /firewall/rules/mangle: every live peer mark with its counters; `name` is the account holding the mark
   * (the mark itself when no account holds it, e.g. a stale entry the next reconcile removes).
   */
  mangleList(): Promise<MangleRule[]> {
    return this.deps.sync.views.mangleList();
  }

  private requireServer(name: string): ServerRow {
    const row = this.deps.servers.get(name);
    if (!row) throw new ApiError(E.WIREGUARD_SERVER_NOT_FOUND);
    return row;
  }

  private requireAccount(name: string): string {
    const row = this.deps.accounts.get(name);
    if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
    return row.name;
  }
}
