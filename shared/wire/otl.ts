// Zod schemas of the one-time-link settings and listing (OneTimeLink*Config, OneTimeLinkList) and their PUT bodies.
import { z } from 'zod';
import { flagFormatError, otlLinkFormatError, otlTextFormatError, OWN } from './error-texts.ts';
import { field, toBoolean, toInteger } from './form.ts';

/** The six optional buttons' numbers. */
export const OTL_BUTTONS = [1, 2, 3, 4, 5, 6] as const;

/** Longest accepted page fragment or label/link (characters). */
export const OTL_FRAGMENT_MAX = 65_536;
/** Link lifetime bounds, in days. */
export const OTL_LIFETIME_MIN = 1;
export const OTL_LIFETIME_MAX = 365;

/** OneTimeLinkConfig: trusted HTML fragments of the page and `lifetime` (days, as a string number). */
export const otlPageConfigSchema = z.object({
  title: z.string(),
  before_body: z.string(),
  after_body: z.string(),
  css: z.string(),
  not_relevant: z.string(),
  lifetime: z.string(),
});
export type OtlPageConfig = z.infer<typeof otlPageConfigSchema>;

/** `button1_label` ... `button6_label`, `button1_link` ... `button6_link`. */
type ButtonFields = { [K in `button${(typeof OTL_BUTTONS)[number]}_${'label' | 'link'}`]: string };

const buttonShape = Object.fromEntries(
  OTL_BUTTONS.flatMap((n) => [[`button${n}_label`, z.string()], [`button${n}_link`, z.string()]]),
) as { [K in keyof ButtonFields]: z.ZodString };

/** OneTimeLinkWireguardConfig. */
export const otlWireguardConfigSchema = z.object({
  ...buttonShape,
  download_config_button_label: z.string(),
  enable: z.boolean(),
  enable_config_qr: z.boolean(),
  enable_config_text: z.boolean(),
});
export type OtlWireguardConfig = z.infer<typeof otlWireguardConfigSchema>;

/** OneTimeLinkIkev2Config. */
export const otlIkev2ConfigSchema = z.object({
  ...buttonShape,
  download_certificate_button_label: z.string(),
  download_profile_button_label: z.string(),
  enable: z.boolean(),
});
export type OtlIkev2Config = z.infer<typeof otlIkev2ConfigSchema>;

/** One live link of OneTimeLinkList. */
export const otlListEntrySchema = z.object({
  account: z.string(),
  created_data: z.string(),
  key: z.string(),
  lifetime: z.string(),
});
export type OtlListEntry = z.infer<typeof otlListEntrySchema>;

/** OneTimeLinkList (`msg`): `olts` keyed by the listed key (the link key's SHA-256 digest). */
export const otlListSchema = z.object({ olts: z.record(z.string(), otlListEntrySchema) });
export type OtlList = z.infer<typeof otlListSchema>;

/** A text field: a string of at most {@link OTL_FRAGMENT_MAX} characters without NUL, else `Wrong <name> format ...`. */
function text(name: string) {
  return field(otlTextFormatError(name), (v) =>
    typeof v === 'string' && v.length <= OTL_FRAGMENT_MAX && !v.includes('\u0000') ? v : undefined).optional();
}

/** A boolean field (1/0, true/false) failing with `Wrong <name> format (1 or 0)`. */
function flag(name: string) {
  return field(flagFormatError(name), toBoolean).optional();
}

/** A button link: empty, or an absolute URL whose scheme is not javascript/data/vbscript (store links, https). */
function link(name: string) {
  return field(otlLinkFormatError(name), (v) => {
    if (typeof v !== 'string' || v.length > OTL_FRAGMENT_MAX) return undefined;
    const s = v.trim();
    if (s === '') return '';
    const scheme = /^([a-z][a-z0-9+.-]*):\S+$/i.exec(s)?.[1]?.toLowerCase();
    return scheme && !['javascript', 'data', 'vbscript', 'file'].includes(scheme) ? s : undefined;
  }).optional();
}

const buttonBody = Object.fromEntries(
  OTL_BUTTONS.flatMap((n) => [[`button${n}_label`, text(`button${n}_label`)], [`button${n}_link`, link(`button${n}_link`)]]),
) as { [K in keyof ButtonFields]: z.ZodOptional<z.ZodType<string>> };

/** PUT /otl/config (extension): any OneTimeLinkConfig field; `lifetime` whole days 1-365. */
export const otlPageConfigUpdateSchema = z.object({
  title: text('title'),
  before_body: text('before_body'),
  after_body: text('after_body'),
  css: text('css'),
  not_relevant: text('not_relevant'),
  lifetime: field(OWN.OTL_WRONG_LIFETIME, (v) => {
    const n = toInteger(v);
    return n !== undefined && n >= OTL_LIFETIME_MIN && n <= OTL_LIFETIME_MAX ? String(n) : undefined;
  }).optional(),
});
export type OtlPageConfigUpdate = z.infer<typeof otlPageConfigUpdateSchema>;

/** PUT /otl/config_wireguard (extension): any OneTimeLinkWireguardConfig field. */
export const otlWireguardConfigUpdateSchema = z.object({
  ...buttonBody,
  download_config_button_label: text('download_config_button_label'),
  enable: flag('enable'),
  enable_config_qr: flag('enable_config_qr'),
  enable_config_text: flag('enable_config_text'),
});
export type OtlWireguardConfigUpdate = z.infer<typeof otlWireguardConfigUpdateSchema>;

/** PUT /otl/config_ikev2 (extension): any OneTimeLinkIkev2Config field. */
export const otlIkev2ConfigUpdateSchema = z.object({
  ...buttonBody,
  download_certificate_button_label: text('download_certificate_button_label'),
  download_profile_button_label: text('download_profile_button_label'),
  enable: flag('enable'),
});
export type OtlIkev2ConfigUpdate = z.infer<typeof otlIkev2ConfigUpdateSchema>;


/** DELETE /otl/<key>: the link's key. */
export const OtlKeyParamsSchema = z.object({ key: z.string() });
