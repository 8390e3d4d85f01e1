// Zod schema of the License resource (GET /license) and the claims a license key carries.
import { z } from 'zod';

/**
 * GET /license. `key` is the installed key masked (first 12 and last 6 characters around `...`): the full key is
 * a secret and only ever leaves the panel through the CLI that installed it. Timestamps are ISO 8601 with offset.
 */
export const licenseSchema = z.object({
  accounts: z.number().int(),
  expiration_date: z.string(),
  key: z.string(),
  last_check: z.string(),
  valid: z.boolean(),
});
export type License = z.infer<typeof licenseSchema>;

/** Payload of a license key (a compact EdDSA JWS): account limit and expiry (unix seconds). */
export const licenseClaimsSchema = z.object({
  accounts: z.number().int().positive(),
  exp: z.number().int().positive(),
  iat: z.number().int().optional(),
  sub: z.string().optional(),
});
export type LicenseClaims = z.infer<typeof licenseClaimsSchema>;

/** Account limit without a valid license. */
export const FREE_TIER_ACCOUNTS = 50;
