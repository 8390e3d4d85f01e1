// Pure ulogd.conf of traffic logging: NFLOG group → BASE → IFINDEX → IP2STR → JSON lines to the panel's unix socket.

/** What the rendered config needs. */
export interface UlogdConfInput {
  /** NFLOG group of the panel's rules (`--nflog-group`). */
  group: number;
  /** Packets the kernel queues per batch (`netlink_qthreshold`, matches `--nflog-threshold`). */
  threshold: number;
  /** Longest wait before a partial batch is handed over, in ms (`netlink_qtimeout`, 10 ms units). */
  flushMs: number;
  /** Unix socket the panel listens on; the JSON plugin connects to it (`mode="unix"`). */
  socketPath: string;
  /** ulogd's own log (start-up errors, reconnects). */
  logPath: string;
}

/** Quotes a value for ulogd's config parser (it has no escapes: refuse what cannot be written). */
function quoted(value: string): string {
  if (/["\n\r]/.test(value)) throw new Error(`ulogd.conf: unusable path ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/**
 * One stack, `log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON`: NFLOG reads the group, BASE decodes the
 * IP/TCP/UDP/ICMP headers (`ip.tos`, `ip.totlen`, ports), IFINDEX turns interface indexes into names (`oob.in`,
 * `oob.out`), IP2STR writes addresses as text, JSON writes one object per packet, `sync=1` (no stdio buffering)
 * to the panel's socket. No `plugin=` lines: ulogd loads every plugin of its own plugin directory (the JSON one
 * comes from Debian's `ulogd2-json`), so the file does not depend on the multiarch path.
 */
export function renderUlogdConf(input: UlogdConfInput): string {
  return [
    '# Written by vpnhost-panel (traffic logging); rewritten on every start.',
    '[global]',
    `logfile=${quoted(input.logPath)}`,
    'loglevel=5',
    'stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON',
    '',
    '[log1]',
    `group=${input.group}`,
    `netlink_qthreshold=${input.threshold}`,
    `netlink_qtimeout=${Math.max(1, Math.round(input.flushMs / 10))}`,
    '',
    '[json1]',
    'sync=1',
    'mode="unix"',
    `file=${quoted(input.socketPath)}`,
    '',
  ].join('\n');
}
