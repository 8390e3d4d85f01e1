// Zod schemas of TrafficLoggingConfig (GET/PUT /traffic_logging): the answer and the PUT payload's field formats.
import { z } from 'zod';
import { flagFormatError, OWN } from '../../shared/wire/error-texts.ts';
import { field, toBoolean, toInteger } from '../../shared/wire/form.ts';
import { ipVersion } from './ip.ts';

/** The attribute/state selectors of TrafficLoggingConfig, in the spec's order. */
export const TRAFFIC_LOGGING_FLAGS = [
  'established', 'incoming', 'interface_in', 'interface_out', 'invalid', 'len', 'mark', 'new', 'related', 'tos', 'untracked',
] as const;
export type TrafficLoggingFlag = (typeof TRAFFIC_LOGGING_FLAGS)[number];

/**
 * GET/PUT /traffic_logging answer. `tsdb_token` is never answered in clear: `''` when unset, else
 * {@link TSDB_TOKEN_MASK} (a PUT carrying the mask keeps the stored token).
 */
export const trafficLoggingConfigSchema = z.object({
  enabled: z.boolean(),
  enabled_tsdb: z.boolean(),
  enabled_remote_syslog: z.boolean(),
  established: z.boolean(),
  incoming: z.boolean(),
  interface_in: z.boolean(),
  interface_out: z.boolean(),
  invalid: z.boolean(),
  len: z.boolean(),
  mark: z.boolean(),
  new: z.boolean(),
  related: z.boolean(),
  tos: z.boolean(),
  untracked: z.boolean(),
  tsdb_bucket: z.string(),
  tsdb_organization: z.string(),
  tsdb_token: z.string(),
  tsdb_url: z.string(),
  remote_syslog_server: z.string(),
  remote_syslog_server_port: z.number().int(),
});
export type TrafficLoggingConfig = z.infer<typeof trafficLoggingConfigSchema>;

/** What GET answers for a stored token. */
export const TSDB_TOKEN_MASK = '********';

/** A boolean field (1/0, true/false) failing with `Wrong <name> format (1 or 0)`. */
function flag(name: string) {
  return field(flagFormatError(name), toBoolean).optional();
}

/** A free text of at most 1024 printable characters (no control characters); surrounding blanks trimmed. */
function text(errorText: string) {
  return field(errorText, (v) => (typeof v === 'string' && v.length <= 1024 && !/[\u0000-\u001f\u007f]/.test(v) ? v.trim() : undefined)).optional();
}

/**
 * PUT /traffic_logging payload: any field, each optional. Format checks only (texts of our own, the spec has none);
 * the spec's checks (`... must be filled`, `TSDB agent not installed`, one method) run on the merged config in
 * the service. `remote_syslog_server` is an IPv4 address or empty; its port 1-65535 (the spec's 65536 is no UDP
 * port); `tsdb_url` an http(s) URL or empty.
 */
export const trafficLoggingUpdateSchema = z.object({
  enabled: flag('enabled'),
  enabled_tsdb: flag('enabled_tsdb'),
  enabled_remote_syslog: flag('enabled_remote_syslog'),
  established: flag('established'),
  incoming: flag('incoming'),
  interface_in: flag('interface_in'),
  interface_out: flag('interface_out'),
  invalid: flag('invalid'),
  len: flag('len'),
  mark: flag('mark'),
  new: flag('new'),
  related: flag('related'),
  tos: flag('tos'),
  untracked: flag('untracked'),
  tsdb_bucket: text(OWN.TL_WRONG_TSDB_TEXT),
  tsdb_organization: text(OWN.TL_WRONG_TSDB_TEXT),
  tsdb_token: text(OWN.TL_WRONG_TSDB_TEXT),
  tsdb_url: field(OWN.TL_WRONG_TSDB_URL, (v) => {
    if (typeof v !== 'string') return undefined;
    const s = v.trim();
    if (s === '') return s;
    try {
      const url = new URL(s);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password ? s : undefined;
    } catch {
      return undefined;
    }
  }).optional(),
  remote_syslog_server: field(OWN.TL_WRONG_SYSLOG_SERVER, (v) => {
    if (typeof v !== 'string') return undefined;
    const s = v.trim();
    return s === '' || (ipVersion(s) === 4 && /^\d{1,3}(\.\d{1,3}){3}$/.test(s)) ? s : undefined;
  }).optional(),
  remote_syslog_server_port: field(OWN.TL_WRONG_SYSLOG_PORT, (v) => {
    const n = toInteger(v);
    return n !== undefined && n >= 1 && n <= 65535 ? n : undefined;
  }).optional(),
});
export type TrafficLoggingUpdate = z.infer<typeof trafficLoggingUpdateSchema>;
