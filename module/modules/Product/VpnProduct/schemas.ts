// Product and service data of the VPN product: validation (error bags) and the password generator.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { CAP_ACTIONS } from './caps/cap-policy.ts';
import { PLAN_TYPES, passwordSchema, requiredEnum, requiredInteger, requiredString, usernameSchema } from '../../../contract/validation.ts';

/** Bandwidth limits the panel accepts for b_download / b_upload (Mbit/s). */
const MIN_BANDWIDTH = 1;
const MAX_BANDWIDTH = 10000;
const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
/** Largest monthly allowance (GB) a plan may carry. */
const MAX_DATA_CAP_GB = 1_000_000;

/** An optional field: missing, null or '' takes `fallback`, anything else goes through `schema`. */
function withDefault<T extends z.ZodType>(schema: T, fallback: unknown) {
  return z.preprocess((v) => (v === undefined || v === null || v === '' ? fallback : v), schema);
}

/**
 * Product data: the panel location, plan, bandwidth, optionally a WireGuard server on that panel, and the data cap:
 * `data_cap_gb` (monthly allowance, 0 = unlimited), `cap_action` (`throttle` or `suspend` when it is used up) and
 * `cap_throttle_mbit` (the throttled rate). Products saved before caps existed read as unlimited.
 */
export function vpnProductSchema(locations: () => string[] | Promise<string[]>) {
  const known = (value: string): boolean | Promise<boolean> => {
    const listed = locations();
    return Array.isArray(listed) ? listed.includes(value) : listed.then((all) => all.includes(value));
  };
  return z.object({
    server_location: requiredString('server_location').refine(known, {
      error: 'The selected server location is invalid.',
    }),
    plan_type: requiredEnum('plan_type', PLAN_TYPES),
    bandwidth: requiredInteger('bandwidth', MIN_BANDWIDTH, MAX_BANDWIDTH),
    wg_server: z.preprocess(
      (v) => (v === undefined || v === null || v === '' ? null : v),
      z.string({ error: 'The wg server field must be a string.' })
        .regex(SERVER_NAME, { error: 'The wg server field must only contain letters, numbers, dashes, and underscores.' })
        .nullable(),
    ),
    data_cap_gb: withDefault(requiredInteger('data_cap_gb', 0, MAX_DATA_CAP_GB), 0),
    cap_action: withDefault(requiredEnum('cap_action', CAP_ACTIONS), 'throttle'),
    cap_throttle_mbit: withDefault(requiredInteger('cap_throttle_mbit', MIN_BANDWIDTH, MAX_BANDWIDTH), 1),
  });
}
export type VpnProductData = z.infer<ReturnType<typeof vpnProductSchema>>;

/** Service data: username, password (generated when omitted), notes. */
export const vpnServiceSchema = z.object({
  username: usernameSchema,
  password: z.preprocess((v) => (v === undefined || v === null || v === '' ? generatePassword() : v), passwordSchema),
  notes: z
    .string({ error: 'The notes field must be a string.' })
    .nullish()
    .transform((v) => v ?? null),
});
export type VpnServiceData = z.infer<typeof vpnServiceSchema>;

const LOWER = 'abcdefghijkmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
const DIGITS = '23456789';

/** 16 random characters with at least one lower-case letter, one upper-case letter and one digit. */
function generatePassword(length = 16): string {
  const all = LOWER + UPPER + DIGITS;
  const chars = [LOWER, UPPER, DIGITS].map((set) => set[randomInt(set.length)]);
  while (chars.length < length) chars.push(all[randomInt(all.length)]);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join('');
}

/** Panel account name of a service: `svc_` and the first 12 hex digits of its uuid (deterministic, so retries adopt). */
export function accountNameFor(serviceUuid: string): string {
  return `svc_${serviceUuid.replace(/-/g, '').slice(0, 12).toLowerCase()}`;
}
