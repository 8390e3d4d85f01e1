// Account (peer) wire shapes (spec "Account", account dump) and the request bodies of /account.
import { z } from 'zod';
import { optionalParam, textParam } from './common-wire.ts';

/** An account as the panel returns it; `allowed_IPs` is the bare peer address, bandwidths and mark strings. */
export const AccountSchema = z.object({
  name: z.string(),
  username: z.string(),
  password: z.string(),
  status: z.enum(['enable', 'disable']),
  wg_name: z.string(),
  allowed_IPs: z.string(),
  b_download: z.string(),
  b_upload: z.string(),
  mangle: z.string(),
  private_key: z.string(),
  public_key: z.string(),
});
export type Account = z.infer<typeof AccountSchema>;

/** GET /account. */
export const AccountListSchema = z.array(AccountSchema);

/** GET /account/<name>/dump, the peer line of `wg show dump` (all strings). */
export const AccountDumpSchema = z.object({
  allowed_ips: z.string(),
  endpoint: z.string(),
  keepalive: z.string(),
  latest_handshake: z.string(),
  transfer_rx: z.string(),
  transfer_tx: z.string(),
});
export type AccountDump = z.infer<typeof AccountDumpSchema>;

/** GET /account/<name>/config_text and /config_qr answer with a string. */
export const AccountConfigTextSchema = z.string();
export const AccountConfigQrSchema = z.string();

/** POST /account body; `wg_name` and `allowed_IPs` are required by the spec (checked with its error texts). */
export const AccountCreateBodySchema = z.object({
  wg_name: textParam,
  allowed_IPs: textParam,
  name: textParam,
  status: textParam,
  username: textParam,
  password: textParam,
  allowed_IPs_ipv6: textParam,
  private_key: textParam,
  public_key: textParam,
  b_download: optionalParam,
  b_upload: optionalParam,
});
export type AccountCreateBody = z.infer<typeof AccountCreateBodySchema>;

/** PUT /account/<name> body (`wg_name`, when sent, must name the account's own server). */
export const AccountUpdateBodySchema = z.object({
  wg_name: textParam,
  status: textParam,
  password: textParam,
  allowed_IPs: textParam,
  allowed_IPs_ipv6: textParam,
  b_download: optionalParam,
  b_upload: optionalParam,
});
export type AccountUpdateBody = z.infer<typeof AccountUpdateBodySchema>;
