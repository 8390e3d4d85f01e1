// `vpnhost panel serve` options: flags first, then environment variables, then defaults.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { canonicalIp } from '../schemas/ip.ts';
import type { ServeOptions } from '../server.ts';

export const SERVE_HELP = `usage: vpnhost panel serve [options]

  --listen HOST:PORT          address to listen on           (VPNHOST_PANEL_LISTEN, default 127.0.0.1:8080)
  --data DIR                  data directory                 (VPNHOST_PANEL_DATA, default ./data/panel)
  --driver linux|simulated    data plane                     (VPNHOST_PANEL_DRIVER, default linux)
  --base-url URL              public URL of the panel        (VPNHOST_PANEL_BASE_URL, default http://<listen>)
  --wireguard auto|kernel|userspace                          (VPNHOST_PANEL_WIREGUARD, default auto)
  --external-interface IFACE  outgoing interface for NAT     (VPNHOST_PANEL_EXTERNAL_INTERFACE, default any)
  --trust-proxy ADDR          honour X-Forwarded-For from ADDR; repeat or comma-separate (VPNHOST_PANEL_TRUST_PROXY)
  --license-public-key FILE   vendor Ed25519 public key PEM  (VPNHOST_LICENSE_PUBLIC_KEY)
  --metrics-token-file FILE   bearer token for GET /metrics (VPNHOST_PANEL_METRICS_TOKEN_FILE; default: access hash only)
  --metrics-per-peer          per-peer byte series in GET /metrics (VPNHOST_PANEL_METRICS_PER_PEER=1; default off)
  --backup-ftp-ca FILE        PEM of CA certificates trusted for FTPS backup uploads besides the system's
                              (VPNHOST_PANEL_BACKUP_FTP_CA; e.g. a self-signed FTP server)
  --watchdog-seconds N        how often a crashed unbound/charon is looked for and restarted (with backoff)
                              (VPNHOST_PANEL_WATCHDOG_SECONDS, default 5; 0 = never restarted automatically)
  -h, --help                  this text

environment: VPNHOST_LOG_LEVEL (default info; JSON lines on stdout, secrets redacted, warn and above written at once)
Prints "panel listening on http://HOST:PORT" when ready; SIGTERM/SIGINT stop it gracefully.
`;

/** Default data directory (flag and env absent). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.VPNHOST_PANEL_DATA || './data/panel';
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** Reads a PEM file named by flag or env; null when neither is set. */
export function readPublicKeyFile(file: string | undefined): string | null {
  if (!file) return null;
  return readFileSync(file, 'utf8');
}

/**
 * The GET /metrics bearer token from a file (first line, trimmed; a file keeps it out of argv and `ps`); null when
 * no file is named. At least 16 visible ASCII characters.
 */
function readMetricsToken(file: string | undefined): string | null {
  if (!file) return null;
  const token = readFileSync(file, 'utf8').split('\n')[0].trim();
  if (!/^[\x21-\x7e]{16,}$/.test(token)) throw new Error(`--metrics-token-file ${file} must hold a token of at least 16 visible ASCII characters`);
  return token;
}

/** Parses `serve` argv against env; `help` true when --help was given. */
export function parseServeOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): { help: true } | { help: false; options: ServeOptions } {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string' },
      data: { type: 'string' },
      driver: { type: 'string' },
      'base-url': { type: 'string' },
      wireguard: { type: 'string' },
      'external-interface': { type: 'string' },
      'trust-proxy': { type: 'string', multiple: true },
      'license-public-key': { type: 'string' },
      'metrics-token-file': { type: 'string' },
      'metrics-per-peer': { type: 'boolean' },
      'backup-ftp-ca': { type: 'string' },
      'watchdog-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
    strict: true,
  });
  if (values.help) return { help: true };
  const trustList = (values['trust-proxy'] ?? (env.VPNHOST_PANEL_TRUST_PROXY ? [env.VPNHOST_PANEL_TRUST_PROXY] : []))
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter(Boolean);
  const trustProxy = trustList.map((item) => {
    const ip = canonicalIp(item);
    if (!ip) throw new Error(`--trust-proxy must be an IP address, got '${item}'`);
    return ip;
  });
  const baseUrl = values['base-url'] ?? env.VPNHOST_PANEL_BASE_URL;
  if (baseUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(baseUrl)) throw new Error(`--base-url must be an http(s) URL, got '${baseUrl}'`);
  const watchdog = values['watchdog-seconds'] ?? env.VPNHOST_PANEL_WATCHDOG_SECONDS ?? '5';
  if (!/^\d{1,5}$/.test(watchdog)) throw new Error(`--watchdog-seconds must be a whole number of seconds (0 = off), got '${watchdog}'`);
  return {
    help: false,
    options: {
      listen: values.listen ?? env.VPNHOST_PANEL_LISTEN ?? '127.0.0.1:8080',
      dataDir: values.data ?? defaultDataDir(env),
      driver: oneOf('--driver', values.driver ?? env.VPNHOST_PANEL_DRIVER ?? 'linux', ['linux', 'simulated'] as const),
      baseUrl: baseUrl?.replace(/\/+$/, ''),
      wireguard: oneOf('--wireguard', values.wireguard ?? env.VPNHOST_PANEL_WIREGUARD ?? 'auto', ['auto', 'kernel', 'userspace'] as const),
      externalInterface: values['external-interface'] ?? env.VPNHOST_PANEL_EXTERNAL_INTERFACE ?? null,
      trustProxy,
      licensePublicKeyPem: readPublicKeyFile(values['license-public-key'] ?? env.VPNHOST_LICENSE_PUBLIC_KEY),
      metricsToken: readMetricsToken(values['metrics-token-file'] ?? env.VPNHOST_PANEL_METRICS_TOKEN_FILE),
      metricsPerPeer: values['metrics-per-peer'] ?? env.VPNHOST_PANEL_METRICS_PER_PEER === '1',
      backupFtpCaPem: readPublicKeyFile(values['backup-ftp-ca'] ?? env.VPNHOST_PANEL_BACKUP_FTP_CA),
      watchdogSeconds: Number(watchdog),
    },
  };
}
