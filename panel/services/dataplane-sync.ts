// Keeps the data plane in step with the store: one serialized lane, one applyPeers per account change, full reconcile.
import type { Driver, InterfaceSpec, PeerChanges, PeerSpec } from '../dataplane/driver.ts';
import { reconcile, type ReconcileReport } from '../dataplane/reconcile.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { AccountRow, PeerRow } from '../store/repositories/accounts.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { formatIpv4 } from './addressing.ts';
import { buildDesiredState } from './desired-state.ts';

/**
 * The data-plane side of every store change.
 *
 * Ordering (how a failure leaves store and data plane consistent): each mutation runs inside {@link serial}, so the
 * store write and its driver call happen as one unit with nothing interleaved (better-sqlite3 transactions cannot
 * span an `await`). The row is written and committed first, then the driver is called; when the driver fails the
 * service writes the previous row back (compensation) and the request fails. A crash between commit and driver
 * call leaves the store ahead of the data plane, which the reconcile on boot (and `PUT /system/reload`) repairs.
 * Reconcile runs in the same lane, so no account change can slip between its read of the store and its writes.
 */
export class DataplaneSync {
  private lane: Promise<unknown> = Promise.resolve();

  constructor(
    readonly driver: Driver,
    private readonly servers: ServersRepository,
    private readonly accounts: AccountsRepository,
    private readonly box: SecretBox,
  ) {}

  /** Runs `task` after every earlier serialized task has settled; resolves or rejects with its outcome. */
  serial<T>(task: () => Promise<T> | T): Promise<T> {
    const run = this.lane.then(task, task);
    this.lane = run.catch(() => undefined);
    return run;
  }

  /** The interface a server row asks for (decrypts the private key). */
  interfaceSpec(row: ServerRow): InterfaceSpec {
    return {
      name: row.interface_name,
      privateKey: this.box.open(row.private_key),
      listenPort: row.listen_port,
      address: row.address,
      addressIpv6: row.ipv6 && row.address_ipv6 ? row.address_ipv6 : null,
      mtu: row.mtu,
      externalIp: row.external_ip ? row.external_ip.split('/')[0] : null,
      externalInterface: row.external_interface,
      internalTraffic: row.internal_traffic === 1,
    };
  }

  /** The peer an account row asks for (server-side keepalive stays off; clients keep NAT mappings open). */
  peerSpec(row: Pick<AccountRow | PeerRow, 'public_key' | 'ip' | 'allowed_ips_ipv6'>): PeerSpec {
    const allowedIps = [`${formatIpv4(row.ip)}/32`];
    if (row.allowed_ips_ipv6) allowedIps.push(row.allowed_ips_ipv6);
    return { publicKey: row.public_key, allowedIps, persistentKeepalive: 0 };
  }

  /**
   * The one `applyPeers` an account change needs, from the row before and after (null = absent): upsert when the
   * account is (still) enabled and its peer differs, remove when it was enabled and no longer is (or changed key).
   * Returns without a driver call when the data plane is unaffected (e.g. a password change).
   */
  async applyAccountChange(iface: string, before: AccountRow | null, after: AccountRow | null): Promise<void> {
    const changes = peerChanges(before && before.status === 'enable' ? this.peerSpec(before) : null,
      after && after.status === 'enable' ? this.peerSpec(after) : null);
    if (changes) await this.driver.applyPeers(iface, changes);
  }

  /**
   * Makes the data plane match the whole store (boot, `PUT /system/reload`): servers and their enabled accounts
   * are read from the store and handed to `reconcile`, which applies only the differences.
   */
  reconcileAll(onProgress?: (done: number, total: number) => void): Promise<ReconcileReport> {
    return this.serial(() => {
      const desired = buildDesiredState(this.servers, this.accounts, this);
      return reconcile(this.driver, desired, { onProgress });
    });
  }
}

/** The minimal change turning peer `before` into peer `after` (either may be absent); null when none is needed. */
export function peerChanges(before: PeerSpec | null, after: PeerSpec | null): PeerChanges | null {
  if (after) {
    if (before && before.publicKey === after.publicKey && samePeer(before, after)) return null;
    const remove = before && before.publicKey !== after.publicKey ? [before.publicKey] : [];
    return { upsert: [after], remove };
  }
  return before ? { upsert: [], remove: [before.publicKey] } : null;
}

function samePeer(a: PeerSpec, b: PeerSpec): boolean {
  return a.persistentKeepalive === b.persistentKeepalive && a.allowedIps.join(',') === b.allowedIps.join(',');
}
