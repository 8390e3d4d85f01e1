// The DNS resolver seam (unbound on linux, an in-memory twin when simulated): one caching resolver for the peers.

/**
 * What the resolver should serve: listen on `listen` (the WireGuard servers' own addresses, port 53), answer only
 * clients inside `acl` (the servers' subnets; everything else is refused), forward every query to `forwarders`
 * (in order of preference) and cap cached TTLs at `maxCacheTtl` seconds.
 */
export interface DnsConfig {
  listen: string[];
  acl: string[];
  forwarders: string[];
  maxCacheTtl: number;
}

/**
 * How `apply` reached the wanted configuration: `started` (was not running), `restarted` (the listening
 * addresses changed: unbound binds its sockets only at start), `reloaded` (`unbound-control reload`: the ACL
 * changed; same pid, cache flushed), `changed` (forwarders / cache TTL set live through `unbound-control`, same
 * pid, cache kept), `unchanged`, `stopped`.
 */
export type DnsApplyOutcome = 'started' | 'restarted' | 'reloaded' | 'changed' | 'unchanged' | 'stopped';

/** The resolver process as seen now. */
export interface DnsState {
  /** Running (its pid alive and answering its control channel where checked). */
  running: boolean;
  /** Its pid while running, else null. */
  pid: number | null;
  /**
   * Set when the resolver died without being stopped (a crash or a kill): what was seen, e.g. `unbound (pid 42)
   * exited with signal SIGKILL`; cleared by the next successful start.
   */
  crash: string | null;
}

/** A configuration the resolver refuses (checked before the running one is touched, which stays as it was). */
export class DnsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnsConfigError';
  }
}

/** A resolver that could not be started or changed (port taken, daemon exited); the message names the cause. */
export class DnsRuntimeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnsRuntimeError';
  }
}

/**
 * The DNS subsystem of the data plane. Contract (test/contract/dns.contract.ts, run against both twins):
 * - `apply(null)` (or a config with no `listen` address) stops the resolver; `apply(config)` makes the running
 *   resolver serve exactly `config`, changing as little as possible (see {@link DnsApplyOutcome}).
 * - A config that fails validation throws {@link DnsConfigError} and leaves the running resolver, its pid and its
 *   configuration untouched. A failure to start throws {@link DnsRuntimeError}; after a failed restart the
 *   previous configuration is running again where possible.
 * - A resolver that dies on its own is reported by `state()` (`running: false`, `crash` set) until restarted.
 */
export interface Dns {
  apply(config: DnsConfig | null): Promise<DnsApplyOutcome>;
  state(): Promise<DnsState>;
  /** The resolver's version (`unbound -V`), e.g. `1.17.1`; `''` when not installed. */
  version(): Promise<string>;
  /** The configuration last applied (null when stopped). */
  applied(): DnsConfig | null;
  /** Stops the resolver (its configuration forgotten). */
  stop(): Promise<void>;
  /** Releases handles; a running resolver keeps serving (the next panel adopts it from its pid file). */
  close(): Promise<void>;
}

/** Whether two configurations are equal (order of addresses significant, as rendered). */
export function sameDnsConfig(a: DnsConfig | null, b: DnsConfig | null): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
