// GET /wireguard/online: accounts whose latest handshake lies within the configured handshake uptime.
import type { Driver } from '../dataplane/driver.ts';
import type { WireguardOnlineEntry } from '../schemas/wireguard.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServersRepository } from '../store/repositories/servers.ts';
import type { ListingPage } from '../schemas/listing.ts';
import { formatIpv4 } from './addressing.ts';

/** Lists online WireGuard sessions from the live interfaces. */
export class OnlineService {
  constructor(
    private readonly servers: ServersRepository,
    private readonly accounts: AccountsRepository,
    private readonly driver: Driver,
    /** `wireguard_handshake_uptime` of the system config, in seconds. */
    private readonly handshakeUptime: () => number,
    private readonly clock: () => Date,
  ) {}

  /**
   * Every account whose peer shook hands at most `wireguard_handshake_uptime` seconds ago, server by server in the
   * order `wg show` lists peers (latest handshake first). Each live peer is matched to its account by the unique
   * public-key index. `page` (limit/offset) narrows the answer; the work stops once the page is full.
   */
  async list(page: ListingPage = {}): Promise<WireguardOnlineEntry[]> {
    const now = Math.floor(this.clock().getTime() / 1000);
    const since = now - this.handshakeUptime();
    const skip = page.offset ?? 0;
    const end = page.limit === undefined ? Infinity : skip + page.limit;
    const out: WireguardOnlineEntry[] = [];
    let seen = 0;
    for (const server of this.servers.list()) {
      if (seen >= end) break;
      const peers = (await this.driver.inspect(server.interface_name))?.peers ?? [];
      // Peers come latest-handshake first (never-shaken last), so the online ones are a prefix.
      let online = 0;
      while (online < peers.length && peers[online].latestHandshake !== 0 && peers[online].latestHandshake >= since) online++;
      // Many online peers: one statement for the server's accounts; a few: one indexed lookup each.
      const index = online > BULK_THRESHOLD ? this.accounts.onlineIndex(server.id) : null;
      for (let i = 0; i < online && seen < end; i++) {
        const peer = peers[i];
        const account = index ? index.get(peer.publicKey) : this.accounts.getByPublicKey(peer.publicKey);
        if (!account) continue;
        if (seen++ < skip) continue;
        out.push({
          name: account.name,
          username: account.username,
          wg_name: server.name,
          allowed_IPs: formatIpv4(account.ip),
          b_download: String(account.b_download),
          b_upload: String(account.b_upload),
          status: account.status,
          endpoint: peer.endpoint ?? '',
          latest_handshake: formatLocalTimestamp(new Date(peer.latestHandshake * 1000)),
          transfer_rx: String(peer.transferRx),
          transfer_tx: String(peer.transferTx),
        });
      }
    }
    return out;
  }
}

/** Above this many online peers of one server, their accounts are read in one statement instead of one by one. */
const BULK_THRESHOLD = 64;

/** `YYYY-MM-DD HH:MM:SS` in the host's local time zone (the one GET /system/info reports). */
export function formatLocalTimestamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}
