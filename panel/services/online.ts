// GET /wireguard/online: accounts whose latest handshake lies within the configured handshake uptime.
import { type Clock } from '../../shared/clock.ts';
import type { Driver } from '../dataplane/wireguard/driver.ts';
import type { WireguardOnlineEntry } from '../../shared/wire/wireguard.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServersRepository } from '../store/repositories/servers.ts';
import type { ListingPage } from '../schemas/listing.ts';
import { formatIpv4 } from './addressing.ts';
import { OnlineIndex } from './online-index.ts';

/** Collaborators of {@link OnlineService}. */
export interface OnlineServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  driver: Driver;
  /** `wireguard_handshake_uptime` of the system config, in seconds. */
  handshakeUptime: () => number;
  clock: Clock;
}

/** Lists online WireGuard sessions from the live interfaces. */
export class OnlineService {
  /** Public key → account, patched from the accounts' change feed (see {@link OnlineIndex}). */
  private readonly index: OnlineIndex;

  constructor(private readonly deps: OnlineServiceDeps) {
    this.index = new OnlineIndex(deps.accounts);
  }

  /**
   * Every account whose peer shook hands at most `wireguard_handshake_uptime` seconds ago, server by server in the
   * order `wg show` lists peers (latest handshake first): one read per interface of just those peers
   * (`Driver.sessions`: wireguard-go's UAPI socket, no process), each matched to its account by the unique public-key
   * index. `page` (limit/offset) narrows the answer; the work stops once the page is full.
   */
  async list(page: ListingPage = {}): Promise<WireguardOnlineEntry[]> {
    const now = Math.floor(this.deps.clock.now().getTime() / 1000);
    const since = now - this.deps.handshakeUptime();
    const skip = page.offset ?? 0;
    const end = page.limit === undefined ? Infinity : skip + page.limit;
    const out: WireguardOnlineEntry[] = [];
    // Handshakes of online peers fall within a few minutes: each distinct second is formatted once per listing.
    const stamps = new Map<number, string>();
    const stamp = (seconds: number): string => {
      let text = stamps.get(seconds);
      if (text === undefined) stamps.set(seconds, (text = formatLocalTimestamp(new Date(seconds * 1000))));
      return text;
    };
    let seen = 0;
    for (const server of this.deps.servers.list()) {
      if (seen >= end) break;
      const peers = (await this.deps.driver.sessions(server.interface_name, since)) ?? [];
      for (let i = 0; i < peers.length && seen < end; i++) {
        const peer = peers[i];
        const account = this.index.get(peer.publicKey);
        // a suspended account's peer stays parked (no allowed IPs) until the next sample: not online
        if (!account || account[1] !== server.id || account[5] !== 'enable') continue;
        if (seen++ < skip) continue;
        const [, , , name, username, status, ip, b_download, b_upload] = account;
        out.push({
          name,
          username,
          wg_name: server.name,
          allowed_IPs: formatIpv4(ip),
          b_download: String(b_download),
          b_upload: String(b_upload),
          status,
          endpoint: peer.endpoint ?? '',
          latest_handshake: stamp(peer.latestHandshake),
          transfer_rx: String(peer.transferRx),
          transfer_tx: String(peer.transferTx),
        });
      }
    }
    return out;
  }
}

/** Two digits. */
const p = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` in the host's local time zone (the one GET /system/info reports). */
export function formatLocalTimestamp(date: Date): string {
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}
