// WireGuard servers: create/edit/delete with generated defaults, kept in step with the data plane; info and dumps.
import type { DefaultRoute, DefaultRouteProbe } from '../dataplane/default-route.ts';
import { DataplaneError, InterfaceHeldError } from '../dataplane/wireguard/driver.ts';
import { generateKeyPair } from '../dataplane/keys.ts';
import { WG_ADDRESS_IN_USE } from '../dataplane/tool-messages.ts';
import { ApiError, E, OWN } from '../http/errors.ts';
import type { Logger } from 'pino';
import type { SecretBox } from '../../shared/secret-box.ts';
import { parseCidr } from '../schemas/ip.ts';
import type { AvailableIps, WireguardCreateBody, WireguardDump, WireguardInfo, WireguardServer, WireguardUpdateBody } from '../../shared/wire/wireguard.ts';
import type { AccountsRepository } from '../store/repositories/accounts.ts';
import type { ServerRow, ServersRepository, ServerValues } from '../store/repositories/servers.ts';
import { freeAddresses, formatV4Cidr, parseV4Cidr, pickServerSubnet } from './addressing.ts';
import type { DataplaneSync } from './dataplane-sync.ts';
import type { HostNetworkReader, HostNetworkView } from './host-networks.ts';
import { dataplaneRefusal } from './refusal.ts';
import { CREATE_PORT_RANGE, KEEP_ALIVE_CAP, checkServerCreate, checkServerUpdate, ipv6SubnetInUse, type ServerInput } from './server-checks.ts';

/** DNS servers handed to clients when none are given. */
const DEFAULT_DNS = { dns_1: '1.1.1.1', dns_2: '8.8.8.8', dns_1_ipv6: '2606:4700:4700::1111', dns_2_ipv6: '2001:4860:4860::8888' };
/** Client PersistentKeepalive when none is given (keeps NAT mappings of clients open). */
const DEFAULT_KEEP_ALIVE = 25;
/** available_ips lists at most this many addresses (a /16's worth); wider subnets are cut there. */
const AVAILABLE_IPS_LIMIT = 65534;

/** Collaborators of the server service. */
export interface ServerServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  sync: DataplaneSync;
  routeProbe: DefaultRouteProbe;
  /** NAT egress interface set by configuration; overrides the probed one when not undefined. */
  externalInterface?: string | null;
  /** The host's networks (through the driver) and the panel's listen address; read fresh for every change. */
  hosts: HostNetworkReader;
  /** Where a refused interface's real cause (e.g. wireguard-go's message) is logged. */
  logger?: Logger;
  /**
   * Called inside the lane after a server was created, changed or deleted in store and data plane (the DNS
   * resolver follows the servers' addresses); it handles its own failures.
   */
  afterChange?: () => Promise<void>;
}

/** Server operations behind /wireguard. */
export class ServerService {
  constructor(private readonly deps: ServerServiceDeps) {}

  list(): Record<string, WireguardServer> {
    const out: Record<string, WireguardServer> = {};
    for (const row of this.deps.servers.list()) out[row.name] = this.toWire(row);
    return out;
  }

  get(name: string): WireguardServer {
    return this.toWire(this.require(name));
  }

  /** The stored row of a server, or `Wireguard server not found`. */
  require(name: string): ServerRow {
    const row = this.deps.servers.get(name);
    if (!row) throw new ApiError(E.WIREGUARD_SERVER_NOT_FOUND);
    return row;
  }

  /** POST /wireguard: checks, generates what is missing, stores, creates the interface (row removed on failure). */
  create(body: WireguardCreateBody): Promise<WireguardServer> {
    const { servers, sync } = this.deps;
    return sync.serial(async () => {
      const host = await this.hostView();
      const input = checkServerCreate(body, { ...this.deps, host });
      const route = await this.deps.routeProbe.probe().catch(() => null);
      const values = this.complete(input, route, host);
      const id = servers.insert(values);
      const row = servers.getById(id)!;
      try {
        await sync.createServer(row, { keepLinkOnFailure: (err) => err instanceof InterfaceHeldError });
      } catch (err) {
        servers.delete(id);
        throw this.driverRefusal(err);
      }
      await this.deps.afterChange?.();
      return this.toWire(row);
    });
  }

  /**
   * PUT /wireguard/<name>: checks and stores; whatever the subsystems carry that changed (the link's key, port,
   * address, MTU; the firewall's NAT and internal traffic; the shaping subnet) is re-applied in place through
   * the sync. New `b_download`/`b_upload` are the server's default for accounts created later (set_bandwidth pushes
   * them to existing ones). On a failure the old row and data plane are put back.
   */
  update(name: string, body: WireguardUpdateBody): Promise<WireguardServer> {
    const { servers, sync } = this.deps;
    return sync.serial(async () => {
      const before = this.require(name);
      const host = await this.hostView();
      const input = checkServerUpdate(body, before, { ...this.deps, host });
      const after = this.merge(before, input, host);
      servers.update(after);
      try {
        await sync.updateServer(before, after);
      } catch (err) {
        servers.update(before);
        throw this.driverRefusal(err);
      }
      await this.deps.afterChange?.();
      return this.toWire(after);
    });
  }

  /** DELETE /wireguard/<name>: refused while accounts exist; removes row, policy and interface (row back on failure). */
  remove(name: string): Promise<void> {
    const { servers, accounts, sync } = this.deps;
    return sync.serial(async () => {
      const row = this.require(name);
      if (accounts.hasAccounts(row.id)) throw new ApiError(E.ACTIVE_PEERS);
      servers.delete(row.id);
      try {
        await sync.removeServer(row);
      } catch (err) {
        servers.restore(row);
        throw err;
      }
      await this.deps.afterChange?.();
    });
  }

  info(): Promise<WireguardInfo> {
    return this.deps.sync.driver.versions();
  }

  /** Live port and public key of the interface (the stored values while the interface is absent). */
  async dump(name: string): Promise<WireguardDump> {
    const row = this.require(name);
    const live = await this.deps.sync.driver.inspect(row.interface_name);
    return live
      ? { port: String(live.listenPort), public_key: live.publicKey }
      : { port: String(row.listen_port), public_key: row.public_key };
  }

  /** Unused host addresses of the subnet, merged against the server's used addresses from the index. */
  availableIps(name: string): AvailableIps {
    const row = this.require(name);
    const cidr = parseV4Cidr(row.address)!;
    return freeAddresses(cidr, this.deps.accounts.iterateIps(row.id), AVAILABLE_IPS_LIMIT);
  }

  /** The wire shape: port and bandwidths as strings, flags as booleans, the private key opened. */
  toWire(row: ServerRow): WireguardServer {
    return {
      name: row.name,
      interface_name: row.interface_name,
      address: row.address,
      listen_port: String(row.listen_port),
      external_ip: row.external_ip,
      dns_1: row.dns_1,
      dns_2: row.dns_2,
      internal_traffic: row.internal_traffic === 1,
      keep_alive: Math.min(row.keep_alive, KEEP_ALIVE_CAP), // rows stored before the cap may hold more
      b_download: String(row.b_download),
      b_upload: String(row.b_upload),
      ikev2: row.ikev2 === 1,
      private_key: this.deps.box.open(row.private_key),
      public_key: row.public_key,
    };
  }

  /** The host's networks, read fresh, with every server interface of the panel left out. */
  private hostView(): Promise<HostNetworkView> {
    return this.deps.hosts.fresh(this.deps.servers.list().map((s) => s.interface_name));
  }

  /**
   * A data-plane failure the client can act on, as its API text: a firewall or shaper refusal keeps the
   * subsystem's text; a listen port held outside the panel (wg's
   * `Address already in use`) is `Port already in use`; an interface name held by another namespace's live
   * wireguard-go is `Interface already in use` (the daemon's real message is logged). Others pass unchanged.
   */
  private driverRefusal(err: unknown): unknown {
    const refused = dataplaneRefusal(err);
    if (refused !== err) return refused;
    if (err instanceof InterfaceHeldError) {
      this.deps.logger?.warn({ iface: err.iface, cause: err.detail }, 'interface name held by another WireGuard daemon');
      return new ApiError(E.INTERFACE_IN_USE);
    }
    return portTaken(err);
  }

  /** A full row for a new server: given values, the rest generated unique (name, interface, port, subnet, keys). */
  private complete(input: ServerInput, route: DefaultRoute | null, host: HostNetworkView): ServerValues {
    const { servers } = this.deps;
    const address =
      input.address ??
      pickServerSubnet(
        servers.list().map((s) => ({ first: s.net_first, last: s.net_last })),
        (cidr) => host.overlapping(parseCidr(formatV4Cidr(cidr))!) !== null,
      );
    if (!address) throw new ApiError(OWN.NO_FREE_SUBNET);
    const externalIp = input.external_ip ?? route?.address ?? null;
    if (!externalIp) throw new ApiError(OWN.NO_EXTERNAL_IP);
    const keys = input.keys ?? generateKeyPair();
    const ipv6 = input.ipv6 ?? false;
    return {
      name: input.name ?? firstFree((n) => `Default_${n}`, 1, (v) => servers.nameInUse(v)),
      interface_name: input.interface_name ?? firstFree((n) => `wg${n}`, 0, (v) => servers.interfaceInUse(v)),
      listen_port: input.listen_port ?? this.freePort(),
      address: formatV4Cidr(address),
      net_first: address.first,
      net_last: address.last,
      external_ip: externalIp,
      external_interface: this.deps.externalInterface !== undefined ? this.deps.externalInterface : (route?.interface ?? null),
      endpoint: input.endpoint ?? '',
      dns_1: input.dns_1 ?? DEFAULT_DNS.dns_1,
      dns_2: input.dns_2 ?? DEFAULT_DNS.dns_2,
      internal_traffic: input.internal_traffic ? 1 : 0,
      keep_alive: input.keep_alive ?? DEFAULT_KEEP_ALIVE,
      mtu: input.mtu ?? 0,
      allowed_ips: input.allowed_ips ?? (ipv6 ? '0.0.0.0/0, ::/0' : '0.0.0.0/0'),
      b_download: input.b_download ?? 0,
      b_upload: input.b_upload ?? 0,
      ikev2: input.ikev2 ? 1 : 0,
      ipv6: ipv6 ? 1 : 0,
      address_ipv6: input.address_ipv6 || (ipv6 ? this.freeIpv6Subnet(0, host) : ''),
      dns_1_ipv6: input.dns_1_ipv6 ?? (ipv6 ? DEFAULT_DNS.dns_1_ipv6 : ''),
      dns_2_ipv6: input.dns_2_ipv6 ?? (ipv6 ? DEFAULT_DNS.dns_2_ipv6 : ''),
      private_key: this.deps.box.seal(keys.privateKey),
      public_key: keys.publicKey,
    };
  }

  /** The stored row with the checked edits applied (IPv6 switched on without an address gets one generated). */
  private merge(row: ServerRow, input: ServerInput, host: HostNetworkView): ServerRow {
    const next: ServerRow = { ...row };
    const assign = <K extends keyof ServerRow>(key: K, value: ServerRow[K] | undefined) => {
      if (value !== undefined) next[key] = value;
    };
    if (input.keys) {
      next.private_key = this.deps.box.seal(input.keys.privateKey);
      next.public_key = input.keys.publicKey;
    }
    if (input.address) {
      next.address = formatV4Cidr(input.address);
      next.net_first = input.address.first;
      next.net_last = input.address.last;
    }
    assign('listen_port', input.listen_port);
    assign('external_ip', input.external_ip);
    assign('endpoint', input.endpoint);
    assign('dns_1', input.dns_1);
    assign('dns_2', input.dns_2);
    assign('mtu', input.mtu);
    assign('keep_alive', input.keep_alive);
    assign('allowed_ips', input.allowed_ips);
    assign('b_download', input.b_download);
    assign('b_upload', input.b_upload);
    assign('address_ipv6', input.address_ipv6);
    assign('dns_1_ipv6', input.dns_1_ipv6);
    assign('dns_2_ipv6', input.dns_2_ipv6);
    if (input.internal_traffic !== undefined) next.internal_traffic = input.internal_traffic ? 1 : 0;
    if (input.ikev2 !== undefined) next.ikev2 = input.ikev2 ? 1 : 0;
    if (input.ipv6 !== undefined) next.ipv6 = input.ipv6 ? 1 : 0;
    if (next.ipv6 && !next.address_ipv6) next.address_ipv6 = this.freeIpv6Subnet(row.id, host);
    return next;
  }

  private freePort(): number {
    for (let port = CREATE_PORT_RANGE.min; port <= CREATE_PORT_RANGE.max; port++) {
      if (!this.deps.servers.portInUse(port)) return port;
    }
    throw new ApiError(OWN.NO_FREE_PORT);
  }

  /** `fd00:0:0:<k>::1/64` with the smallest k whose subnet no other server's (and no host network) overlaps. */
  private freeIpv6Subnet(exceptId = 0, host?: HostNetworkView): string {
    return firstFree(
      (k) => `fd00:0:0:${k.toString(16)}::1/64`,
      1,
      (v) => ipv6SubnetInUse(v, this.deps.servers, exceptId) || (!!host && host.overlapping(parseCidr(v)!) !== null),
    );
  }
}

/**
 * A listen port held by a socket outside the panel (the store knows only its own servers) makes wg fail with
 * `Address already in use`; that is the spec's `Port already in use`, not an unexpected error.
 */
function portTaken(err: unknown): unknown {
  return err instanceof DataplaneError && err.message.endsWith(WG_ADDRESS_IN_USE) ? new ApiError(E.PORT_IN_USE) : err;
}

/** `make(n)` for the smallest n ≥ `from` that `taken` refuses (bounded: servers are few). */
function firstFree(make: (n: number) => string, from: number, taken: (value: string) => boolean): string {
  for (let n = from; n < from + 100_000; n++) {
    const value = make(n);
    if (!taken(value)) return value;
  }
  throw new ApiError(OWN.NO_FREE_SUBNET);
}
