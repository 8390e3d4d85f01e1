// The data-plane sync's collaborators: its dependencies, the network-policy source and the followers of store changes.
import type { Logger } from 'pino';
import type { Dataplane } from '../dataplane/dataplane.ts';
import type { FilterRule, FirewallConf, PortForwardRule } from '../dataplane/firewall/firewall.ts';
import type { ReconcileReport } from '../dataplane/reconcile.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { AccountRow, AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';

/** The firewall's global settings when the store holds none: forwarding on, every policy ACCEPT. */
export const DEFAULT_FIREWALL_CONF: FirewallConf = {
  internal_traffic: true,
  ip_forward: true,
  policy_forward: 'ACCEPT',
  policy_input: 'ACCEPT',
  policy_output: 'ACCEPT',
};

/**
 * Where the sync reads the network policy the firewall store holds (port forwards, filter rules, firewall conf);
 * the firewall services plug their repositories in with {@link DataplaneSync.setPolicySource}. Default: no
 * forwards, no operator rules, {@link DEFAULT_FIREWALL_CONF}.
 */
export interface PolicySource {
  firewallGlobal(): { conf: FirewallConf; rules: FilterRule[] };
  /** Port forwards stored for a server (the sync keeps those whose peer is enabled). */
  forwards(server: ServerRow): PortForwardRule[];
}

/** Collaborators of {@link DataplaneSync}. */
export interface DataplaneSyncDeps {
  dataplane: Dataplane;
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  /** NAT egress for servers whose row names none (`--external-interface`). */
  externalInterface?: string | null;
  logger?: Logger;
}

/** What a full reconcile did: the WireGuard counts (firewall and shaping report only failures). */
export type SyncReconcileReport = ReconcileReport;

/**
 * A subsystem driven beside WireGuard/firewall/shaping that follows store changes on its own (IKEv2's credentials):
 * called inside the lane after the others took the change; its failures are its own (logged, not thrown), except
 * in a full reconcile, where they are reported as `<name>` failures.
 */
export interface SyncFollower {
  readonly name: string;
  accountChanged(server: ServerRow, before: AccountRow | null, after: AccountRow | null): Promise<void>;
  /** A server's settings changed (e.g. its `ikev2` flag or DNS). */
  serverChanged(before: ServerRow, after: ServerRow): Promise<void>;
  reconcile(): Promise<void>;
  /** Registers what runs (inside the lane) after the follower started, reloaded or stopped its daemon. */
  onDaemonChange?(listener: () => Promise<void>): void;
}

/** No forwards, no operator rules, the default firewall settings. */
export const NO_POLICY: PolicySource = { firewallGlobal: () => ({ conf: DEFAULT_FIREWALL_CONF, rules: [] }), forwards: () => [] };
