// The DNS resolver: GET/PUT /dns (license-gated), the desired unbound config from the store, reconcile, health.
import { type Clock } from '../../shared/clock.ts';
import type { Logger } from 'pino';
import { networkOf } from '../dataplane/cidr.ts';
import { DnsConfigError, DnsRuntimeError, type Dns, type DnsConfig } from '../dataplane/dns/dns.ts';
import type { DnsWriter } from './lane-writers.ts';
import { ApiError, E, OWN } from '../http/errors.ts';
import type { DnsStatus, DnsUpdate } from '../schemas/dns.ts';
import type { DnsRepository, DnsSettings } from '../store/repositories/dns.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';

/** Collaborators of {@link DnsService}. */
export interface DnsServiceDeps {
  repo: DnsRepository;
  servers: ServersRepository;
  /** Reads of the resolver (state, version). */
  dns: Pick<Dns, 'state' | 'version'>;
  /** The resolver's writer (`DataplaneSync.writers.dns`): writes only inside the lane. */
  writer: DnsWriter;
  /** Whether a valid license is installed (GET/PUT /dns answer `The license is not active` otherwise). */
  licensed: () => boolean;
  /** The data plane's serial lane (`DataplaneSync.serial`). */
  serial: <T>(task: () => Promise<T>) => Promise<T>;
  clock: Clock;
  logger?: Logger;
}

/** The server's own address (no prefix) in its IPv4 subnet, and the IPv6 one when the server has IPv6. */
function serverAddresses(row: ServerRow): string[] {
  const out = [row.address.split('/')[0]];
  if (row.ipv6 === 1 && row.address_ipv6) out.push(row.address_ipv6.split('/')[0]);
  return out;
}

/** The server's subnets (network form), IPv4 then IPv6. */
function serverSubnets(row: ServerRow): string[] {
  const nets = [row.address, ...(row.ipv6 === 1 && row.address_ipv6 ? [row.address_ipv6] : [])];
  return nets.map((net) => networkOf(net) ?? net);
}

/**
 * The resolver's settings and runtime. The stored row holds `enabled`, the forwarders and the TTL cap; the
 * listen addresses (each server's own address) and the ACL (each server's subnet) follow the WireGuard servers,
 * so a server created, readdressed or deleted re-applies the resolver (`serversChanged`, called by the sync).
 * Every data-plane call runs in the sync's lane.
 */
export class DnsService {
  private readonly listeners: Array<() => Promise<void>> = [];

  constructor(private readonly deps: DnsServiceDeps) {}

  /**
   * Registers `fn`, called inside the lane after a PUT /dns switched `enabled` (what {@link dnsAddressesFor}
   * answers changed: e.g. IKEv2 pools reload their DNS). Its failures are logged, not thrown.
   */
  onEnabledChange(fn: () => Promise<void>): void {
    this.listeners.push(fn);
  }

  /** GET /dns. */
  async get(): Promise<DnsStatus> {
    this.requireLicense();
    return this.status();
  }

  /**
   * PUT /dns: merges the change into the stored settings, stores them and makes the resolver match (started,
   * changed live, reloaded or stopped). When the resolver refuses, the previous settings are stored again and the
   * running resolver is left as it was; the answer is `DNS resolver error: <cause>`. Answers the DnsStatus after
   * the change.
   */
  async update(change: DnsUpdate): Promise<DnsStatus> {
    this.requireLicense();
    await this.deps.serial(async () => {
      const before = this.deps.repo.get();
      const after: DnsSettings = {
        enabled: change.enabled ?? before.enabled,
        forwarders_1: change.forwarders_1 ?? before.forwarders_1,
        forwarders_2: change.forwarders_2 ?? before.forwarders_2,
        max_cache_ttl: change.max_cache_ttl ?? before.max_cache_ttl,
      };
      this.deps.repo.put(after, this.deps.clock.now());
      try {
        await this.deps.writer.apply(this.desired(after));
      } catch (err) {
        this.deps.repo.put(before, this.deps.clock.now());
        throw this.refusal(err);
      }
      if (before.enabled === after.enabled) return;
      for (const fn of this.listeners) {
        await fn().catch((err: unknown) => this.deps.logger?.error({ err }, 'a listener did not follow the dns switch'));
      }
    });
    return this.status();
  }

  /** Makes the resolver match the store (boot, `PUT /system/reload`): started if enabled and not running, same config. */
  reconcile(): Promise<void> {
    return this.deps.serial(async () => {
      await this.deps.writer.apply(this.desired(this.deps.repo.get()));
    });
  }

  /** After a server change, inside the lane: the listen addresses and ACL follow. Failures are logged, not thrown. */
  async serversChanged(): Promise<void> {
    try {
      await this.deps.writer.apply(this.desired(this.deps.repo.get()));
    } catch (err) {
      this.deps.logger?.error({ err }, 'dns resolver not updated after a wireguard server change');
    }
  }

  /**
   * The DNS addresses peers of server `serverName` get while the resolver is enabled (its own IPv4 address, and
   * its IPv6 address when the server has IPv6); `[]` when DNS is off or the server is unknown. For config_text
   * and for the IKEv2 pools.
   */
  dnsAddressesFor(serverName: string): string[] {
    const row = this.deps.servers.get(serverName);
    return row ? this.serverDns(row) ?? [] : [];
  }

  /** The resolver addresses for a server row, or null when DNS is off (peers then get the server's dns_1/dns_2). */
  serverDns(row: ServerRow): string[] | null {
    return this.deps.repo.get().enabled ? serverAddresses(row) : null;
  }

  /** Whether the resolver should run now (enabled, and a server to listen on). */
  wanted(): boolean {
    return this.desired(this.deps.repo.get()) !== null;
  }

  /** For GET /system/status: why the enabled resolver is not running (a crash, say), or null when all is well. */
  async problem(): Promise<string | null> {
    if (!this.desired(this.deps.repo.get())) return null;
    const state = await this.deps.dns.state();
    if (state.running) return null;
    return `dns resolver not running: ${state.crash ?? 'not started'}`;
  }

  /** The config the resolver should serve, or null when it should not run (disabled, or no server to listen on). */
  desired(settings: DnsSettings): DnsConfig | null {
    if (!settings.enabled) return null;
    const servers = this.deps.servers.list();
    if (servers.length === 0) return null;
    const forwarders = [...new Set([settings.forwarders_1, settings.forwarders_2].filter((f) => f !== ''))];
    return {
      listen: [...new Set(servers.flatMap(serverAddresses))],
      acl: [...new Set(servers.flatMap(serverSubnets))],
      forwarders,
      maxCacheTtl: settings.max_cache_ttl,
    };
  }

  private async status(): Promise<DnsStatus> {
    const settings = this.deps.repo.get();
    const [state, version] = await Promise.all([this.deps.dns.state(), this.deps.dns.version()]);
    return {
      acl: [...new Set(this.deps.servers.list().flatMap(serverSubnets))],
      dnsd: version,
      enabled: settings.enabled,
      forwarders_1: settings.forwarders_1,
      forwarders_2: settings.forwarders_2,
      max_cache_ttl: String(settings.max_cache_ttl),
      pid: state.pid === null ? '' : String(state.pid),
    };
  }

  private requireLicense(): void {
    if (!this.deps.licensed()) throw new ApiError(E.LICENSE_NOT_ACTIVE);
  }

  private refusal(err: unknown): unknown {
    if (err instanceof DnsConfigError || err instanceof DnsRuntimeError) {
      this.deps.logger?.warn({ err }, 'dns resolver refused the change');
      return new ApiError(OWN.DNS_FAILED, err.message);
    }
    return err;
  }
}
