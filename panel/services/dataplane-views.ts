// Live text and JSON views of the firewall and shaping subsystems, by server or account name (nothing cached).
import type { Dataplane } from '../dataplane/dataplane.ts';
import { FirewallError, type FirewallInfoView } from '../dataplane/firewall/firewall.ts';
import type { MangleListEntry, NatListEntry } from '../dataplane/render/firewall-listing.ts';
import { E } from '../../shared/wire/error-texts.ts';
import type { AccountRow, AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';

/** Live text and JSON views straight from the subsystems (nothing cached, nothing from the store but names). */
export interface DataplaneViews {
  firewallInfo(): Promise<FirewallInfoView>;
  natRules(serverName: string): Promise<string>;
  filterRules(serverName: string): Promise<string>;
  mangleRules(accountName: string): Promise<string>;
  serverTrafficControl(serverName: string): Promise<string>;
  accountTrafficControl(accountName: string): Promise<string>;
  natList(): Promise<NatListEntry[]>;
  /** Every peer mark; `name` is the account's name (the mark when no account holds it). */
  mangleList(): Promise<MangleListEntry[]>;
}

/** What the views read. */
export interface DataplaneViewsDeps {
  dataplane: Dataplane;
  servers: ServersRepository;
  accounts: AccountsRepository;
}

/** The server row of `name`; throws the spec's `Wireguard server not found` as a {@link FirewallError}. */
export function requireServer(servers: ServersRepository, name: string): ServerRow {
  const row = servers.get(name);
  if (!row) throw new FirewallError(E.WIREGUARD_SERVER_NOT_FOUND);
  return row;
}

function requireAccount(deps: DataplaneViewsDeps, name: string): { row: AccountRow; server: ServerRow } {
  const row = deps.accounts.get(name);
  if (!row) throw new FirewallError(E.ACCOUNT_NOT_FOUND);
  return { row, server: deps.servers.getById(row.server_id)! };
}

/** The {@link DataplaneViews} over the bundle and the store's names. */
export function dataplaneViews(deps: DataplaneViewsDeps): DataplaneViews {
  const dp = deps.dataplane;
  return {
    firewallInfo: () => dp.firewall.info(),
    natRules: async (name) => dp.firewall.natRules(requireServer(deps.servers, name).interface_name),
    filterRules: async (name) => dp.firewall.filterRules(requireServer(deps.servers, name).interface_name),
    mangleRules: async (name) => {
      const { row, server } = requireAccount(deps, name);
      return dp.firewall.mangleRules(server.interface_name, row.mangle);
    },
    serverTrafficControl: async (name) => dp.shaper.show(requireServer(deps.servers, name).interface_name),
    accountTrafficControl: async (name) => {
      const { row, server } = requireAccount(deps, name);
      return dp.shaper.show(server.interface_name, row.public_key);
    },
    natList: () => dp.firewall.natList(),
    mangleList: async () =>
      (await dp.firewall.mangleList()).map((entry) => ({ ...entry, name: deps.accounts.nameByMangle(entry.mark) ?? entry.name })),
  };
}
