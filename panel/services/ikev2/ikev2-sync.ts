// Drives the IPsec seam from the store: full loads (enable, settings, certificates, reconcile) and per-account changes.
import type { Logger } from 'pino';
import type { IpsecDesired, IpsecUser } from '../../dataplane/ipsec/ipsec.ts';
import type { IpsecWriter } from '../lane-writers.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { AccountRow, AccountsRepository } from '../../store/repositories/accounts.ts';
import type { Ikev2DaemonInputs, Ikev2Repository } from '../../store/repositories/ikev2.ts';
import type { ServerRow, ServersRepository } from '../../store/repositories/servers.ts';
import { formatIpv4 } from '../addressing.ts';
import type { SyncFollower } from '../dataplane-sync.ts';

/** Collaborators of {@link Ikev2Sync}. */
export interface Ikev2SyncDeps {
  /** charon's writer (`DataplaneSync.writers.ipsec`): writes only inside the lane. */
  ipsec: IpsecWriter;
  repo: Ikev2Repository;
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  /** The panel resolver's addresses for a server's clients, null when DNS is off (then its dns_1/dns_2). */
  serverDns?: (server: ServerRow) => string[] | null;
  /** Runs (in the lane) right before an account change ends its SA (the traffic statistics sample its last bytes). */
  beforeTerminate?: () => Promise<void>;
  logger?: Logger;
}

/**
 * Which accounts the daemon knows and how: an account is loaded (credentials, its own connection and its one-address
 * pool) when IKEv2 is enabled with both certificates, the account is `enable` and its server has `ikev2=1`.
 * Methods are called inside the data-plane lane (`DataplaneSync.serial`), never concurrently.
 */
export class Ikev2Sync implements SyncFollower {
  readonly name = 'ipsec';
  private readonly daemonListeners: Array<() => Promise<void>> = [];

  constructor(private readonly deps: Ikev2SyncDeps) {}

  /** `listener` runs after every full load or stop (the TUN's shaping tree follows the daemon). */
  onDaemonChange(listener: () => Promise<void>): void {
    this.daemonListeners.push(listener);
  }

  /** Whether the daemon should run: enabled and both certificates present. */
  wanted(row: Ikev2DaemonInputs = this.deps.repo.daemonInputs()): boolean {
    return row.enabled && !!row.ca_cert && !!row.server_cert && !!row.server_key_sealed;
  }

  /** The whole desired configuration from the store (null when the daemon should not run). */
  desired(): IpsecDesired | null {
    const row = this.deps.repo.get();
    if (!this.wanted(row)) return null;
    const users: IpsecUser[] = [];
    for (const server of this.deps.servers.list()) {
      if (!server.ikev2) continue;
      for (const account of this.deps.accounts.iterateOfServer(server.id)) {
        const user = this.userOf(server, account);
        if (user) users.push(user);
      }
    }
    return {
      settings: row.advanced, caCert: row.ca_cert, serverCert: row.server_cert, serverKey: this.deps.box.open(row.server_key_sealed),
      serverId: row.server_domain || row.server_ip, users,
    };
  }

  /** Starts/reloads (or stops) the daemon so it matches the store as a whole. */
  async applyAll(): Promise<void> {
    const desired = this.desired();
    if (desired) await this.deps.ipsec.apply(desired);
    else await this.deps.ipsec.stop();
    await this.followDaemon(false);
  }

  /**
   * Runs the daemon listeners (the TUN's shaping tree). Their failure is the reconcile's to report (`rethrow`); on
   * the request paths (enable, settings, certificates) it is logged — the daemon took the change, reload repairs tc.
   */
  private async followDaemon(rethrow: boolean): Promise<void> {
    for (const listener of this.daemonListeners) {
      try {
        await listener();
      } catch (err) {
        if (rethrow) throw err;
        this.deps.logger?.error({ err: (err as Error).message }, 'ikev2 shaping did not follow the daemon');
      }
    }
  }

  /**
   * One account changed (created, edited, disabled, deleted; `before`/`after` null for none): reloads that account's
   * credentials only — never a restart, the other SAs stay. A disable/delete/move away terminates its SA. A failure is
   * logged, not thrown: the WireGuard side already took the change and the next reconcile repairs the daemon.
   */
  async accountChanged(server: ServerRow, before: AccountRow | null, after: AccountRow | null): Promise<void> {
    if (!this.wanted()) return;
    const b = before ? this.userOf(server, before) : null;
    const a = after ? this.userOf(server, after) : null;
    try {
      if (b && (!a || a.username !== b.username)) await this.deps.ipsec.removeUser(b.username);
      if (a && (!b || a.password !== b.password || a.address !== b.address || a.dns.join() !== b.dns.join())) {
        // a new password or address applies to the next login: the old SA ends so the client re-authenticates
        if (b) {
          await this.deps.beforeTerminate?.().catch((err: unknown) => this.deps.logger?.error({ err }, 'traffic sample before an SA ends failed'));
          await this.deps.ipsec.terminate(b.username);
        }
        await this.deps.ipsec.upsertUser(a);
      }
    } catch (err) {
      this.deps.logger?.error({ err: (err as Error).message }, 'ikev2 credentials reload failed');
    }
  }

  /** A server's `ikev2` flag or DNS changed: a full load when the daemon is wanted (other edits cost nothing). */
  async serverChanged(before: ServerRow, after: ServerRow): Promise<void> {
    if (before.ikev2 === after.ikev2 && before.dns_1 === after.dns_1 && before.dns_2 === after.dns_2) return;
    if (this.wanted()) await this.applyAll();
  }

  /** The panel's resolver was switched on or off: the pools hand out other DNS servers (a full load when wanted). */
  async dnsChanged(): Promise<void> {
    if (this.wanted()) await this.applyAll();
  }

  /** Boot and `PUT /system/reload`: the daemon started (after a crash too) and loaded from the store, or stopped. */
  async reconcile(): Promise<void> {
    const desired = this.desired();
    if (desired) await this.deps.ipsec.apply(desired);
    else await this.deps.ipsec.stop();
    await this.followDaemon(true);
  }

  private userOf(server: ServerRow, account: AccountRow): IpsecUser | null {
    if (!server.ikev2 || account.status !== 'enable') return null;
    return {
      username: account.username, password: this.deps.box.open(account.password), address: formatIpv4(account.ip),
      dns: this.deps.serverDns?.(server) ?? [server.dns_1, server.dns_2].filter(Boolean),
    };
  }
}
