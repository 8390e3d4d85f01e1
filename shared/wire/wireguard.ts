// WireGuard server wire shapes (spec "WireguardServer", "WireguardInfo", "WireguardDump", online entries).
import { z } from 'zod';
import { optionalParam, textParam } from './common-wire.ts';
import { AccountSchema } from './account.ts';

/** A WireGuard server as the panel returns it; port and bandwidths are strings, flags real booleans. */
export const WireguardServerSchema = z.object({
  name: z.string(),
  interface_name: z.string(),
  address: z.string(),
  listen_port: z.string(),
  external_ip: z.string(),
  dns_1: z.string(),
  dns_2: z.string(),
  internal_traffic: z.boolean(),
  keep_alive: z.number().int(),
  b_download: z.string(),
  b_upload: z.string(),
  ikev2: z.boolean(),
  private_key: z.string(),
  public_key: z.string(),
});
export type WireguardServer = z.infer<typeof WireguardServerSchema>;

/** GET /wireguard: servers keyed by name. */
export const WireguardServerMapSchema = z.record(z.string(), WireguardServerSchema);
export type WireguardServerMap = z.infer<typeof WireguardServerMapSchema>;

/** GET /wireguard/info: version labels of the WireGuard pieces. */
export const WireguardInfoSchema = z.object({
  wireguard: z.string(),
  'wireguard-dkms': z.string(),
  'wireguard-tools': z.string(),
});
export type WireguardInfo = z.infer<typeof WireguardInfoSchema>;

/** GET /wireguard/<name>/dump. */
export const WireguardDumpSchema = z.object({ port: z.string(), public_key: z.string() });
export type WireguardDump = z.infer<typeof WireguardDumpSchema>;

/** GET /wireguard/<name>/available_ips: unused host addresses of the server subnet. */
export const AvailableIpsSchema = z.array(z.string());
export type AvailableIps = z.infer<typeof AvailableIpsSchema>;

/** GET /wireguard/<name>/peers: accounts of the server keyed by account name. */
export const WireguardPeersSchema = z.record(z.string(), AccountSchema);
export type WireguardPeers = z.infer<typeof WireguardPeersSchema>;

/** One entry of GET /wireguard/online. */
export const WireguardOnlineEntrySchema = z.object({
  name: z.string(),
  username: z.string(),
  wg_name: z.string(),
  allowed_IPs: z.string(),
  b_download: z.string(),
  b_upload: z.string(),
  status: z.string(),
  endpoint: z.string(),
  latest_handshake: z.string(),
  transfer_rx: z.string(),
  transfer_tx: z.string(),
});
export type WireguardOnlineEntry = z.infer<typeof WireguardOnlineEntrySchema>;
export const WireguardOnlineSchema = z.array(WireguardOnlineEntrySchema);

const serverEditFields = {
  private_key: textParam,
  public_key: textParam,
  listen_port: optionalParam,
  mtu: optionalParam,
  keep_alive: optionalParam,
  allowed_ips: textParam,
  endpoint: textParam,
  address: textParam,
  internal_traffic: optionalParam,
  external_ip: textParam,
  dns_1: textParam,
  dns_2: textParam,
  ipv6: optionalParam,
  address_ipv6: textParam,
  dns_1_ipv6: textParam,
  dns_2_ipv6: textParam,
  b_download: optionalParam,
  b_upload: optionalParam,
  ikev2: optionalParam,
};

/** POST /wireguard body: every parameter optional; omitted ones are generated. */
export const WireguardCreateBodySchema = z.object({
  name: textParam,
  interface_name: textParam,
  ...serverEditFields,
});
export type WireguardCreateBody = z.infer<typeof WireguardCreateBodySchema>;

/** PUT /wireguard/<name> body. */
export const WireguardUpdateBodySchema = z.object(serverEditFields);
export type WireguardUpdateBody = z.infer<typeof WireguardUpdateBodySchema>;
