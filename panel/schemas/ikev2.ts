// Zod schemas of the IKEv2 resources: Ikev2Info, Ikev2Config, Ikev2AdvancedSettings (ranges, defaults), online entries.
import { z } from 'zod';
import { CHARONDEBUG_SUBSYSTEMS, charondebugError, E, OWN } from '../../shared/wire/error-texts.ts';
import { field, toBoolean, toInteger } from '../../shared/wire/form.ts';

/** GET /ikev2/info. */
export const ikev2InfoSchema = z.object({ pid_charon: z.string(), pid_starter: z.string(), ipsec: z.string() });
export type Ikev2Info = z.infer<typeof ikev2InfoSchema>;

/** The subject fields of the CA, in the spec's order. */
export const CA_SUBJECT_FIELDS = [
  'ca_common_name', 'ca_country_name', 'ca_locality', 'ca_organization', 'ca_organizational_unit', 'ca_state_or_province_name',
] as const;
/** The subject (and SAN) fields of the server certificate. */
export const SERVER_SUBJECT_FIELDS = [
  'server_common_name', 'server_country_name', 'server_domain', 'server_ip', 'server_locality', 'server_organization',
  'server_organizational_unit', 'server_state_or_province_name',
] as const;

/** GET /ikev2/config (and the answer of every PKI/enable call): strings, `''` = unset; keys as PEM. */
export const ikev2ConfigSchema = z.object({
  enabled: z.boolean(),
  ca_cert: z.string(),
  ca_key: z.string(),
  ...Object.fromEntries(CA_SUBJECT_FIELDS.map((f) => [f, z.string()])) as Record<(typeof CA_SUBJECT_FIELDS)[number], z.ZodString>,
  server_cert: z.string(),
  server_key: z.string(),
  ...Object.fromEntries(SERVER_SUBJECT_FIELDS.map((f) => [f, z.string()])) as Record<(typeof SERVER_SUBJECT_FIELDS)[number], z.ZodString>,
});
export type Ikev2Config = z.infer<typeof ikev2ConfigSchema>;

/** Longest subject field accepted (X.509 upper bound of a CN is 64; we allow 128 for O/OU/L/ST and cut none). */
const MAX_SUBJECT = 128;

/** A required subject text: missing/blank → `missing`; too long or with control characters → OWN text. */
function required(missing: string) {
  return field(missing, (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)).pipe(subjectText());
}
function optional() {
  return field(OWN.IKE_WRONG_SUBJECT, (v) => (typeof v === 'string' ? v.trim() : undefined)).pipe(subjectText()).optional();
}
function subjectText() {
  return z.string().refine((s) => s.length <= MAX_SUBJECT && !/[\u0000-\u001f\u007f]/.test(s), { message: OWN.IKE_WRONG_SUBJECT });
}

/** PUT /ikev2/import_ca_rsa: both PEM texts (format checked by the PKI, which answers `Certificate not found/failed`). */
export const importCaSchema = z.object({
  ca_cert: field(E.CA_CERT_MUST_BE_FILLED, (v) => (typeof v === 'string' && v.trim() !== '' ? v : undefined)),
  ca_key: field(E.CA_KEY_MUST_BE_FILLED, (v) => (typeof v === 'string' && v.trim() !== '' ? v : undefined)),
});

/** PUT /ikev2/generate_ca_rsa. */
export const generateCaSchema = z.object({
  ca_common_name: required(E.COMMON_NAME_MUST_BE_FILLED),
  ca_organization: required(E.ORGANIZATION_MUST_BE_FILLED),
  ca_country_name: optional(),
  ca_locality: optional(),
  ca_organizational_unit: optional(),
  ca_state_or_province_name: optional(),
});
export type GenerateCaInput = z.infer<typeof generateCaSchema>;

const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** PUT /ikev2/generate_server_rsa: domain (DNS name) and IPv4 become subjectAltNames, `server_ipv6` too when given. */
export const generateServerSchema = z.object({
  server_domain: required(E.SERVER_DOMAIN_MUST_BE_FILLED).refine((s) => DOMAIN.test(s), { message: OWN.IKE_WRONG_DOMAIN }),
  server_ip: required(E.SERVER_IP_MUST_BE_FILLED).refine((s) => IPV4.test(s), { message: OWN.IKE_WRONG_SERVER_IP }),
  server_common_name: required(E.COMMON_NAME_MUST_BE_FILLED),
  server_organization: required(E.ORGANIZATION_MUST_BE_FILLED),
  server_organizational_unit: optional(),
  server_locality: optional(),
  server_state_or_province_name: optional(),
  server_country_name: optional(),
  server_ipv6: field(OWN.IKE_WRONG_SERVER_IPV6, (v) => {
    if (typeof v !== 'string') return undefined;
    const s = v.trim();
    return s === '' || (z.ipv6().safeParse(s).success) ? s : undefined;
  }).optional(),
});
export type GenerateServerInput = z.infer<typeof generateServerSchema>;

/** PUT /ikev2: `enabled` 1 or 0 (required). */
export const ikev2EnableSchema = z.object({
  enabled: field(OWN.IKE_WRONG_ENABLED, toBoolean),
});

// ---- advanced settings ----

type Sub = (typeof CHARONDEBUG_SUBSYSTEMS)[number];
type DebugKey = `charondebug_${Sub}`;

/** Ikev2AdvancedSettings as stored and answered. */
export interface Ikev2AdvancedSettings extends Record<DebugKey, number> {
  uniqueids: string;
  strictcrlpolicy: string;
  authby: string;
  closeaction: string;
  compress: string;
  dpdaction: string;
  dpddelay: number;
  dpdtimeout: number;
  inactivity: number;
  esp: string;
  forceencaps: string;
  fragmentation: string;
  ike: string;
  ikelifetime: number;
  installpolicy: string;
  keyingtries: number;
  lifetime: number;
  margintime: number;
  mobike: string;
  modeconfig: string;
  reauth: string;
  rekey: string;
  rekeyfuzz: number;
  type: string;
}

/** The reset values (spec "Defaults restored by the reset operation"). */
export const IKEV2_DEFAULTS: Readonly<Ikev2AdvancedSettings> = Object.freeze({
  ...(Object.fromEntries(CHARONDEBUG_SUBSYSTEMS.map((s) => [`charondebug_${s}`, 0])) as Record<DebugKey, number>),
  authby: 'pubkey', closeaction: 'none', compress: 'no', dpdaction: 'clear', dpddelay: 300, dpdtimeout: 150,
  esp: 'aes256-sha256,chacha20poly1305-sha512,aes256-sha1,aes256gcm16-ecp384,3des-sha1!',
  forceencaps: 'yes', fragmentation: 'yes',
  ike: 'aes256-sha1-modp1024,aes128-sha1-modp1024,chacha20poly1305-sha512-curve25519-prfsha512,aes256gcm16-sha384-prfsha384-ecp384,3des-sha1-modp1024!',
  ikelifetime: 86400, inactivity: 86400, installpolicy: 'yes', keyingtries: 5, lifetime: 3600, margintime: 600,
  mobike: 'yes', modeconfig: 'pull', reauth: 'yes', rekey: 'no', rekeyfuzz: 100, strictcrlpolicy: 'no', type: 'tunnel',
  uniqueids: 'no',
});

const MAX_INT = 2147483647;

function oneOf(values: readonly string[], text: string) {
  return field(text, (v) => (typeof v === 'string' && values.includes(v) ? v : undefined));
}
function int(min: number, max: number, text: string) {
  return field(text, (v) => {
    const n = toInteger(v);
    return n !== undefined && n >= min && n <= max ? n : undefined;
  });
}

/** One algorithm keyword list: `aes256-sha1,...` with an optional trailing `!`; at most 1024 characters. */
const PROPOSAL = /^[a-z0-9]+(-[a-z0-9]+)*(,[a-z0-9]+(-[a-z0-9]+)*)*!?$/;
function proposals(missing: string) {
  return field(missing, (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined)).refine(
    (s) => s.length <= 1024 && PROPOSAL.test(s),
    { message: OWN.IKE_WRONG_PROPOSALS },
  );
}

/**
 * PUT /ikev2/advanced_settings: every field required, checked in the spec's order of texts.
 *
 * Placement of the spec's two texts per name (the seed lists both; each is kept where its range fits):
 * - `Incorrect value Forceencaps (should be yes|no)` checks `forceencaps` (values yes, no);
 *   `Incorrect value Forceencaps (should be yes|accept|force|no)` checks `fragmentation`, whose values are exactly
 *   yes|accept|force|no and which has no text of its own (the seed names the neighbouring field).
 * - `Incorrect value Keyingtries (should be 1 to 2147483647)` checks `keyingtries` (range 1-2147483647);
 *   `Incorrect value Keyingtries (should be 0 to 2147483647)` checks `rekeyfuzz`, the one field with range
 *   0-2147483647 and no text of its own; it stands after Rekey in the seed list, where rekeyfuzz sorts.
 * `dpdaction` has no seed text: it fails with our own `Incorrect value Dpdaction (should be none|clear|hold|restart)`.
 */
export const advancedSettingsSchema = z.object({
  ...(Object.fromEntries(CHARONDEBUG_SUBSYSTEMS.map((s) => [`charondebug_${s}`, int(-1, 4, charondebugError(s))])) as Record<DebugKey, z.ZodType<number>>),
  uniqueids: oneOf(['yes', 'no', 'never', 'replace', 'keep'], E.IKE_UNIQUEIDS),
  strictcrlpolicy: oneOf(['yes', 'no', 'ifuri'], E.IKE_STRICTCRLPOLICY),
  authby: oneOf(['pubkey', 'rsasig', 'ecdsasig', 'psk', 'secret', 'xauthrsasig', 'xauthpsk', 'never'], E.IKE_AUTHBY),
  closeaction: oneOf(['none', 'clear', 'hold', 'restart'], E.IKE_CLOSEACTION),
  compress: oneOf(['yes', 'no'], E.IKE_COMPRESS),
  dpdaction: oneOf(['none', 'clear', 'hold', 'restart'], OWN.IKE_DPDACTION),
  dpddelay: int(0, MAX_INT, E.IKE_DPDDELAY),
  dpdtimeout: int(0, MAX_INT, E.IKE_DPDTIMEOUT),
  inactivity: int(0, MAX_INT, E.IKE_INACTIVITY),
  esp: proposals(E.IKE_ESP_MUST_BE_FILLED),
  forceencaps: oneOf(['yes', 'no'], E.IKE_FORCEENCAPS),
  fragmentation: oneOf(['yes', 'accept', 'force', 'no'], E.IKE_FRAGMENTATION),
  ike: proposals(E.IKE_IKE_MUST_BE_FILLED),
  ikelifetime: int(0, MAX_INT, E.IKE_IKELIFETIME),
  installpolicy: oneOf(['yes', 'no'], E.IKE_INSTALLPOLICY),
  keyingtries: int(1, MAX_INT, E.IKE_KEYINGTRIES),
  lifetime: int(1, 86400, E.IKE_LIFETIME),
  margintime: int(1, MAX_INT, E.IKE_MARGINTIME),
  mobike: oneOf(['yes', 'no'], E.IKE_MOBIKE),
  modeconfig: oneOf(['push', 'pull'], E.IKE_MODECONFIG),
  reauth: oneOf(['yes', 'no'], E.IKE_REAUTH),
  rekey: oneOf(['yes', 'no'], E.IKE_REKEY),
  rekeyfuzz: int(0, MAX_INT, E.IKE_KEYINGTRIES_ZERO),
  type: oneOf(['tunnel', 'transport', 'transport_proxy', 'passthrough', 'drop'], E.IKE_TYPE),
}) as unknown as z.ZodType<Ikev2AdvancedSettings>;

/** Ikev2AdvancedSettings as answered (GET/PUT /ikev2/advanced_settings). */
export const ikev2AdvancedSettingsSchema = z.object({
  ...(Object.fromEntries(CHARONDEBUG_SUBSYSTEMS.map((s) => [`charondebug_${s}`, z.number().int()])) as Record<DebugKey, z.ZodNumber>),
  uniqueids: z.string(), strictcrlpolicy: z.string(), authby: z.string(), closeaction: z.string(), compress: z.string(),
  dpdaction: z.string(), dpddelay: z.number().int(), dpdtimeout: z.number().int(), inactivity: z.number().int(), esp: z.string(),
  forceencaps: z.string(), fragmentation: z.string(), ike: z.string(), ikelifetime: z.number().int(), installpolicy: z.string(),
  keyingtries: z.number().int(), lifetime: z.number().int(), margintime: z.number().int(), mobike: z.string(), modeconfig: z.string(),
  reauth: z.string(), rekey: z.string(), rekeyfuzz: z.number().int(), type: z.string(),
}) as unknown as z.ZodType<Ikev2AdvancedSettings>;

/** GET /ikev2/online entry. */
export const ikev2OnlineEntrySchema = z.object({
  name: z.string(), username: z.string(), wg_name: z.string(), allowed_IPs: z.string(), b_download: z.string(),
  b_upload: z.string(), status: z.string(), endpoint: z.string(), uptime: z.string(),
});
export type Ikev2OnlineEntry = z.infer<typeof ikev2OnlineEntrySchema>;

/** GET /ikev2/online. */
export const ikev2OnlineSchema = z.array(ikev2OnlineEntrySchema);
