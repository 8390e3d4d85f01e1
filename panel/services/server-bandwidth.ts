// PUT /wireguard/<name>/set_bandwidth: the server's default b_download/b_upload onto every account, then one shaper batch.
import { ApiError, E } from '../http/errors.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServersRepository } from '../store/repositories/servers.ts';
import { ChangeLane, type PolicySync } from './firewall.ts';
import { dataplaneRefusal } from './refusal.ts';

/** Collaborators of the bandwidth service. */
export interface ServerBandwidthServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  sync: PolicySync;
}

/** Applies a server's default bandwidth (Mbit/s, 0 = unlimited) to every account of the server. */
export class ServerBandwidthService {
  private readonly lane = new ChangeLane();

  constructor(private readonly deps: ServerBandwidthServiceDeps) {}

  /**
   * Writes the server's `b_download`/`b_upload` to every account of the server in one transaction, then
   * `DataplaneSync.applyServerBandwidth` re-reads them and shapes them in one batch. On a data-plane failure the
   * accounts' previous values are written back (one transaction) and the data plane re-applied from them.
   */
  setBandwidth(name: string): Promise<void> {
    const { servers, accounts, sync } = this.deps;
    return this.lane.run(async () => {
      const { server, before } = await sync.serial(() => {
        const server = servers.get(name);
        if (!server) throw new ApiError(E.WIREGUARD_SERVER_NOT_FOUND);
        return { server, before: accounts.setServerBandwidth(server.id, server.b_download, server.b_upload) };
      });
      try {
        await sync.applyServerBandwidth(server.name);
      } catch (err) {
        await sync.serial(() => accounts.restoreBandwidths(before));
        await sync.applyServerBandwidth(server.name).catch(() => undefined);
        throw dataplaneRefusal(err);
      }
    });
  }
}
