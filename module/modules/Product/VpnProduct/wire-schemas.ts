// The panel wire schemas the VPN product's client parses answers with, re-exported from panel/schemas.
import { z } from 'zod';

export { AccountSchema, AccountListSchema, type Account } from '../../../../panel/schemas/account.ts';
export { WireguardServerSchema, WireguardServerMapSchema, AvailableIpsSchema, type WireguardServer } from '../../../../panel/schemas/wireguard.ts';
export { SuccessSchema } from '../../../../panel/schemas/common-wire.ts';

/** Envelope with `msg` left open; the msg is parsed by the operation's own schema afterwards. */
export const EnvelopeSchema = z.object({ error: z.string(), msg: z.unknown(), status: z.string() });

export const SystemStatusSchema = z.object({
  count_accounts: z.number(),
  count_accounts_available: z.number(),
  count_wireguard: z.number(),
  license: z.string(),
  license_valid: z.boolean(),
  status: z.string(),
  version: z.string(),
});
export type SystemStatus = z.infer<typeof SystemStatusSchema>;
