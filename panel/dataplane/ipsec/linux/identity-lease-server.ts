// The panel's DHCP responder for charon's dhcp plugin: hands each EAP identity its account's own address.
import { createSocket, type Socket } from 'node:dgram';
import type { IpsecUser } from '../ipsec.ts';
import { buildDhcpReply, DHCP, parseDhcpRequest, type DhcpRequest } from './dhcp-packet.ts';

/** Options of {@link IdentityLeaseServer}. */
export interface IdentityLeaseOptions {
  /** Address the responder listens on and charon's dhcp plugin sends to (default 127.0.0.1). */
  address?: string;
  /** UDP port (default 67, the only one charon's dhcp plugin sends to; tests use others). */
  port?: number;
  /** Port replies are sent to (default 68, the DHCP client port charon's packet socket reads; tests use others). */
  replyPort?: number;
  /** Where refusals and socket errors are reported (never a secret: identities and addresses only). */
  log?: (line: string) => void;
}

/** What one identity is leased. */
interface Lease {
  address: string;
  dns: string[];
}

/** Lease time told to charon; it holds the address for the IKE SA's life and releases it at the end. */
const LEASE_SECONDS = 86_400;

/**
 * Clients that do not present their username as IKE identity (Windows' built-in client sends its IP address) reach
 * the shared EAP connection, whose pool is `dhcp`: after EAP-MSCHAPv2, charon's dhcp plugin (`identity_lease = yes`,
 * server = this responder) sends a DISCOVER whose client identifier is the peer's EAP identity. The responder answers
 * from an in-memory map kept equal to the accounts charon holds secrets for (`setUsers` with every full load, `upsert`
 * / `remove` with each account change: O(1)), so the client gets its account's own address and DNS — the same as
 * through the account's own pool. Unknown identities get no OFFER (charon then fails the exchange); a REQUEST for
 * another address gets a NAK. Replies go to the relay address (giaddr, which the plugin sets to its own address when
 * it unicasts) on the client port, where the plugin's packet socket reads them.
 */
export class IdentityLeaseServer {
  private socket: Socket | null = null;
  private readonly leases = new Map<string, Lease>();
  readonly address: string;
  private port: number;

  constructor(private readonly opts: IdentityLeaseOptions = {}) {
    this.address = opts.address ?? '127.0.0.1';
    this.port = opts.port ?? 67;
  }

  /** The bound UDP port (after {@link start}; port 0 picks one). */
  get boundPort(): number {
    return this.port;
  }

  /** Binds the socket once; later calls do nothing. Fails when the port is taken by a socket without SO_REUSEADDR. */
  async start(): Promise<void> {
    if (this.socket) return;
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    socket.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    socket.on('error', (err) => this.opts.log?.(`identity leases: ${err.message}`));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address: this.address, port: this.port, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    this.port = socket.address().port;
    socket.unref(); // the responder never keeps a process alive by itself
    this.socket = socket;
  }

  /** Replaces every lease (a full load). */
  setUsers(users: readonly IpsecUser[]): void {
    this.leases.clear();
    for (const u of users) this.leases.set(u.username, { address: u.address, dns: u.dns });
  }

  upsert(user: IpsecUser): void {
    this.leases.set(user.username, { address: user.address, dns: user.dns });
  }

  remove(username: string): void {
    this.leases.delete(username);
  }

  /** The address `identity` would be leased (tests and diagnostics). */
  leaseOf(identity: string): string | null {
    return this.leases.get(identity)?.address ?? null;
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  private onMessage(msg: Buffer, from: string): void {
    const request = parseDhcpRequest(msg);
    if (!request || !this.socket) return;
    const identity = request.clientId ? request.clientId.toString('utf8') : '';
    const lease = identity ? this.leases.get(identity) : undefined;
    if (request.type === DHCP.DISCOVER) {
      if (!lease) {
        this.opts.log?.(`identity leases: no address for EAP identity ${JSON.stringify(identity.slice(0, 64))}`);
        return;
      }
      this.reply(request, from, DHCP.OFFER, lease);
    } else if (request.type === DHCP.REQUEST) {
      if (lease && request.requestedIp === lease.address) this.reply(request, from, DHCP.ACK, lease);
      else this.reply(request, from, DHCP.NAK, null);
    }
    // RELEASE, DECLINE, INFORM: nothing to keep (the address belongs to the account, not to a lease table)
  }

  private reply(request: DhcpRequest, from: string, type: typeof DHCP.OFFER | typeof DHCP.ACK | typeof DHCP.NAK, lease: Lease | null): void {
    const packet = buildDhcpReply(request, {
      type, yiaddr: lease?.address ?? '0.0.0.0', serverId: this.address, dns: lease?.dns ?? [], leaseSeconds: LEASE_SECONDS,
    });
    const to = request.giaddr !== '0.0.0.0' ? request.giaddr : from;
    this.socket?.send(packet, this.opts.replyPort ?? 68, to);
  }
}
