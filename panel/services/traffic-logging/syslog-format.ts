// Pure RFC 5424 rendering of a flow record: header, one structured-data element (account, address, flow), message.
import type { FlowRecord } from './flow-event.ts';
import type { TrafficLoggingFlag } from '../../schemas/traffic-logging.ts';

/** The SD-ID of the flow element: `flow@32473` (32473 is the private enterprise number RFC 5612 sets aside for examples). */
const SD_ID = 'flow@32473';
/** PRI of every message: facility local0 (16), severity informational (6) → 134. */
const SYSLOG_PRI = 16 * 8 + 6;
const APP_NAME = 'vpnhost-panel';
const MSG_ID = 'flow';

/** Escapes a PARAM-VALUE (RFC 5424 §6.3.3: `"`, `\` and `]` get a backslash). */
export function escapeParam(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** A header field: printable US-ASCII without spaces, at most `max` characters, `-` when empty. */
function headerField(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return clean || '-';
}

/** The flow's parameters in the order they are written, limited to the attributes `flags` select. */
function flowParams(record: FlowRecord, flags: Readonly<Record<TrafficLoggingFlag, boolean>>): Array<[string, string]> {
  const e = record.event;
  const out: Array<[string, string]> = [
    ['account', record.account],
    ['address', record.address],
    ['state', e.state],
    ['direction', record.outgoing ? 'out' : 'in'],
    ['proto', e.protocol],
    ['src', e.src],
    ['dst', e.dst],
  ];
  if (e.sport !== null) out.push(['sport', String(e.sport)]);
  if (e.dport !== null) out.push(['dport', String(e.dport)]);
  if (flags.interface_in) out.push(['in', e.interface_in]);
  if (flags.interface_out && e.interface_out !== null) out.push(['out', e.interface_out]);
  if (flags.len) out.push(['len', String(e.length)]);
  if (flags.tos) out.push(['tos', String(e.tos)]);
  if (flags.mark) out.push(['mark', String(e.mark)]);
  return out;
}

/**
 * One RFC 5424 message: `<134>1 <RFC 3339 time, ms, Z> <host> vpnhost-panel <pid> flow [flow@32473 account="..."
 * address="..." state="new" ...] <account> <proto> <src>:<sport> -> <dst>:<dport> <state>`.
 */
export function formatSyslog(record: FlowRecord, flags: Readonly<Record<TrafficLoggingFlag, boolean>>, host: string, pid: number): string {
  const params = flowParams(record, flags).map(([k, v]) => `${k}="${escapeParam(v)}"`).join(' ');
  const e = record.event;
  const port = (p: number | null) => (p === null ? '' : `:${p}`);
  const msg = `${record.account} ${e.protocol} ${e.src}${port(e.sport)} -> ${e.dst}${port(e.dport)} ${e.state}`;
  return `<${SYSLOG_PRI}>1 ${e.time.toISOString()} ${headerField(host, 255)} ${APP_NAME} ${pid} ${MSG_ID} [${SD_ID} ${params}] ${msg}`;
}
