// A peer's client configuration (wg-quick text and its QR code) and its live dump line.
import QRCode from 'qrcode';
import type { Driver } from '../dataplane/wireguard/driver.ts';
import { renderClientConfig } from '../dataplane/render/client-config.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { AccountDump } from '../../shared/wire/account.ts';
import type { AccountWithServer } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { formatIpv4 } from './addressing.ts';
import { KEEP_ALIVE_CAP } from './server-checks.ts';

/** Builds config_text, config_qr and dump of an account. */
export class AccountConfigService {
  constructor(
    private readonly servers: ServersRepository,
    private readonly box: SecretBox,
    private readonly driver: Driver,
    /** The panel resolver's addresses for a server while DNS is enabled (they replace dns_1/dns_2), else null. */
    private readonly resolverDns: (server: ServerRow) => string[] | null = () => null,
  ) {}

  /**
   * The wg-quick client text: [Interface] PrivateKey, Address, DNS (the server's own address while the panel's
   * resolver is enabled, else its dns_1/dns_2), MTU when set; [Peer] the server's PublicKey,
   * AllowedIPs (the server's `allowed_ips`), Endpoint (`endpoint` or else `external_ip`, with `listen_port`),
   * PersistentKeepalive when `keep_alive` > 0.
   */
  configText(account: AccountWithServer): string {
    const server = this.server(account);
    const ipv6 = server.ipv6 === 1;
    return renderClientConfig({
      privateKey: account.private_key ? this.box.open(account.private_key) : '',
      addresses: [`${formatIpv4(account.ip)}/32`, ...(ipv6 && account.allowed_ips_ipv6 ? [account.allowed_ips_ipv6] : [])],
      dns: this.resolverDns(server) ?? [server.dns_1, server.dns_2, ...(ipv6 ? [server.dns_1_ipv6, server.dns_2_ipv6] : [])],
      mtu: server.mtu,
      serverPublicKey: server.public_key,
      endpointHost: server.endpoint || server.external_ip.split('/')[0],
      endpointPort: server.listen_port,
      allowedIps: server.allowed_ips.split(',').map((s) => s.trim()).filter((s) => s.length > 0),
      persistentKeepalive: Math.min(server.keep_alive, KEEP_ALIVE_CAP),
    });
  }

  /** The same text as a PNG QR code, base64 without a `data:` prefix. */
  async configQr(account: AccountWithServer): Promise<string> {
    const png = await QRCode.toBuffer(this.configText(account), { type: 'png', errorCorrectionLevel: 'M', margin: 2 });
    return png.toString('base64');
  }

  /**
   * The peer's line of `wg show <if> dump` as strings: allowed IPs, endpoint (`(none)` before the first packet),
   * keepalive (`off` for 0), latest handshake (unix seconds, `0` for never), bytes received and sent. A disabled
   * account has no peer on the interface and answers its stored addresses with empty counters.
   */
  async dump(account: AccountWithServer): Promise<AccountDump> {
    const server = this.server(account);
    const live = await this.driver.inspect(server.interface_name);
    const peer = live?.peers.find((p) => p.publicKey === account.public_key);
    // a suspended account's peer may still be parked (no allowed IPs) until the next traffic sample: shown as gone
    if (!peer || peer.allowedIps.length === 0) {
      const ips = [`${formatIpv4(account.ip)}/32`, ...(account.allowed_ips_ipv6 ? [account.allowed_ips_ipv6] : [])];
      return { allowed_ips: ips.join(','), endpoint: '(none)', keepalive: 'off', latest_handshake: '0', transfer_rx: '0', transfer_tx: '0' };
    }
    return {
      allowed_ips: peer.allowedIps.length > 0 ? peer.allowedIps.join(',') : '(none)',
      endpoint: peer.endpoint ?? '(none)',
      keepalive: peer.persistentKeepalive > 0 ? String(peer.persistentKeepalive) : 'off',
      latest_handshake: String(peer.latestHandshake),
      transfer_rx: String(peer.transferRx),
      transfer_tx: String(peer.transferTx),
    };
  }

  private server(account: AccountWithServer): ServerRow {
    return this.servers.getById(account.server_id)!;
  }
}
