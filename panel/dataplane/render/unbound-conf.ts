// Pure renderers and parsers of unbound: unbound.conf text, the change plan between two configs, `unbound -V`.
import type { DnsConfig } from '../dns/dns.ts';
import { DnsConfigError } from '../dns/dns.ts';
import { ipVersion, parseCidr } from '../../schemas/ip.ts';

/** Where the panel's own unbound keeps its files and control channel. */
export interface UnboundPaths {
  /** The config directory (config, pid file, control keys, log), absolute. */
  dir: string;
  /** UDP/TCP port of the resolver on every listen address (53). */
  port: number;
  /** TCP port of `unbound-control` on 127.0.0.1 (TLS with the keys of `unbound-control-setup`). */
  controlPort: number;
}

/** Upper bound unbound accepts for a TTL setting (a signed 32-bit value). */
const MAX_TTL = 2_147_483_647;

/**
 * Throws {@link DnsConfigError} unless every field is what unbound.conf can carry: `listen` and `forwarders` IP
 * literals, `acl` CIDRs, `maxCacheTtl` an integer 0..2^31-1. Both twins run this before touching anything.
 */
export function checkDnsConfig(config: DnsConfig): void {
  for (const ip of config.listen) if (ipVersion(ip) === 0) throw new DnsConfigError(`listen address is not an IP address: ${JSON.stringify(ip)}`);
  for (const ip of config.forwarders) if (ipVersion(ip) === 0) throw new DnsConfigError(`forwarder is not an IP address: ${JSON.stringify(ip)}`);
  for (const net of config.acl) if (!parseCidr(net)) throw new DnsConfigError(`acl entry is not a CIDR: ${JSON.stringify(net)}`);
  if (!Number.isInteger(config.maxCacheTtl) || config.maxCacheTtl < 0 || config.maxCacheTtl > MAX_TTL) {
    throw new DnsConfigError(`max cache TTL out of range: ${config.maxCacheTtl}`);
  }
  if (config.forwarders.length === 0) throw new DnsConfigError('no forwarder');
}

/** A quoted unbound.conf string; paths with a quote or a line break are refused (they could inject options). */
function quoted(path: string): string {
  if (/["\r\n\\]/.test(path)) throw new DnsConfigError(`path not usable in unbound.conf: ${JSON.stringify(path)}`);
  return `"${path}"`;
}

/**
 * unbound.conf for `config` (checked with {@link checkDnsConfig}): no privilege drop or chroot (the panel runs it),
 * logs to stderr (the daemon's log file), listens on the given addresses only (`ip-freebind` so a link that is
 * not up yet does not stop the start), refuses every client but the ACL's, forwards everything (no recursion,
 * no DNSSEC validation: the forwarders are trusted), caps cached TTLs, and opens `unbound-control` on 127.0.0.1
 * with the keys of `unbound-control-setup -d <dir>`.
 */
export function renderUnboundConf(config: DnsConfig, paths: UnboundPaths): string {
  checkDnsConfig(config);
  const dir = paths.dir.replace(/\/+$/, '');
  const lines = [
    '# Written by the vpnhost panel from its database; edits are overwritten.',
    'server:',
    `    directory: ${quoted(dir)}`,
    '    chroot: ""',
    '    username: ""',
    `    pidfile: ${quoted(`${dir}/unbound.pid`)}`,
    '    logfile: ""',
    '    use-syslog: no',
    '    verbosity: 1',
    '    do-daemonize: no',
    `    port: ${paths.port}`,
    '    ip-freebind: yes',
    '    so-reuseport: no',
    ...config.listen.map((ip) => `    interface: ${ip}`),
    '    access-control: 0.0.0.0/0 refuse',
    '    access-control: ::0/0 refuse',
    ...config.acl.map((net) => `    access-control: ${net} allow`),
    `    cache-max-ttl: ${config.maxCacheTtl}`,
    `    cache-max-negative-ttl: ${Math.min(config.maxCacheTtl, 3600)}`,
    '    module-config: "iterator"',
    '    hide-identity: yes',
    '    hide-version: yes',
    'remote-control:',
    '    control-enable: yes',
    '    control-interface: 127.0.0.1',
    `    control-port: ${paths.controlPort}`,
    `    server-key-file: ${quoted(`${dir}/unbound_server.key`)}`,
    `    server-cert-file: ${quoted(`${dir}/unbound_server.pem`)}`,
    `    control-key-file: ${quoted(`${dir}/unbound_control.key`)}`,
    `    control-cert-file: ${quoted(`${dir}/unbound_control.pem`)}`,
    'forward-zone:',
    '    name: "."',
    ...config.forwarders.map((ip) => `    forward-addr: ${ip}`),
    '',
  ];
  return lines.join('\n');
}

/**
 * How to go from the running `before` to `after`: `restart` when the listen addresses changed (unbound binds
 * its sockets only at start; `reload` keeps the old ones), `reload` when the ACL changed, else the
 * `unbound-control` argument lists that set forwarders (`forward ADDR...`) and the TTL caps (`set_option`) live,
 * keeping the cache; no commands when nothing changed.
 */
export type UnboundPlan = { kind: 'restart' } | { kind: 'reload' } | { kind: 'live'; commands: string[][] };

/** The {@link UnboundPlan} from `before` (running) to `after`. */
export function planUnboundChange(before: DnsConfig, after: DnsConfig): UnboundPlan {
  if (JSON.stringify(before.listen) !== JSON.stringify(after.listen)) return { kind: 'restart' };
  if (JSON.stringify(before.acl) !== JSON.stringify(after.acl)) return { kind: 'reload' };
  const commands: string[][] = [];
  if (JSON.stringify(before.forwarders) !== JSON.stringify(after.forwarders)) commands.push(['forward', ...after.forwarders]);
  if (before.maxCacheTtl !== after.maxCacheTtl) {
    commands.push(['set_option', `cache-max-ttl: ${after.maxCacheTtl}`]);
    commands.push(['set_option', `cache-max-negative-ttl: ${Math.min(after.maxCacheTtl, 3600)}`]);
  }
  return { kind: 'live', commands };
}

/** The version of `unbound -V` output (`Version 1.17.1` on its first line), or `''`. */
export function parseUnboundVersion(output: string): string {
  return /^Version\s+(\S+)/m.exec(output)?.[1] ?? '';
}
