// The IPsec/IKEv2 seam (strongSwan's charon): desired configuration in, live SAs out; linux and simulated twins.
import type { Ikev2AdvancedSettings } from '../../schemas/ikev2.ts';

/** One account that may connect over IKEv2 (enabled, on a server with `ikev2=1`). */
export interface IpsecUser {
  /** EAP identity and IKE identity (the account's `username`). */
  username: string;
  /** EAP-MSCHAPv2 secret (the account's password, in clear only in memory and in the daemon). */
  password: string;
  /** The account's own `allowed_IPs` address (IPv4, no prefix), handed out as its virtual IP. */
  address: string;
  /** DNS servers handed out with the address (the WireGuard server's dns_1/dns_2). */
  dns: string[];
}

/** The whole desired state of the daemon. */
export interface IpsecDesired {
  settings: Ikev2AdvancedSettings;
  /** PEM texts. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** The server's IKE identity (the certificate's `server_domain`). */
  serverId: string;
  users: IpsecUser[];
}

/** One live IKE SA, as the daemon lists it. */
export interface IpsecSa {
  /** Connection name (`vpnhost-eap`, the shared one; `u-<username>` with identity leases off). */
  conn: string;
  /** charon's unique IKE SA id. */
  uniqueId: string;
  /** EAP identity of the remote (falls back to its IKE identity). */
  username: string;
  /** `ESTABLISHED`, `CONNECTING`, ... */
  state: string;
  /** Remote public address (no port). */
  remoteHost: string;
  /** Virtual IP assigned to the remote, '' when none. */
  virtualIp: string;
  /** Seconds since the IKE SA was established. */
  establishedSeconds: number;
  /** Bytes over the CHILD SAs: into the server (from the client) and out of it. */
  bytesIn: number;
  bytesOut: number;
}

/** Daemon status for GET /ikev2/info and /system/status. */
export interface IpsecStatus {
  /** Whether the daemon should run (last {@link Ipsec.apply}) but its process is gone. */
  crashed: boolean;
  running: boolean;
  pid: number | null;
  /** Version label (`5.9.8`), '' when unknown. */
  version: string;
}

/**
 * The IKEv2 responder. `apply` starts the daemon when it is not running and makes its whole configuration equal
 * to `desired` (one batch; stale conns, pools and secrets unloaded); `upsertUser`/`removeUser` change one account
 * without touching the others' SAs (the incremental path of account changes). `stop` ends the daemon.
 * Implementations: `linux/charon-ipsec.ts` (charon-systemd + vici), `simulated/simulated-ipsec.ts`.
 */
export interface Ipsec {
  apply(desired: IpsecDesired): Promise<void>;
  upsertUser(user: IpsecUser): Promise<void>;
  /** Unloads the user's credentials, connection and pool and terminates its SAs. */
  removeUser(username: string): Promise<void>;
  /** Terminates every IKE SA of `username`; answers how many were terminated. */
  terminate(username: string): Promise<number>;
  listSas(): Promise<IpsecSa[]>;
  /**
   * The TUN device decrypted IKEv2 traffic enters on and traffic to the clients' virtual IPs leaves through
   * (kernel-libipsec; always {@link IPSEC_DEVICE}), null while the daemon is not running or runs on the kernel's XFRM
   * (no device: the panel's per-device policy then does not reach IKEv2 clients). It appears when charon starts and
   * goes with it, so the shaping tree on it is rebuilt after every start.
   */
  device(): Promise<string | null>;
  status(): Promise<IpsecStatus>;
  stop(): Promise<void>;
  /** Releases sockets (the daemon keeps running). */
  close(): Promise<void>;
}

/** A failure of the IPsec daemon or its control channel. */
export class IpsecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IpsecError';
  }
}

/**
 * The name of charon's kernel-libipsec TUN device. strongSwan 5.9 hard-codes the pattern `ipsec%d` (no
 * strongswan.conf option names it), so the kernel gives the first free one: `ipsec0` in the panel's namespace, where
 * the panel's charon is the only libipsec user. The linux twin checks this after every start and refuses to run
 * under another name, so the firewall rules rendered for this name (before the device exists) always fit.
 */
export const IPSEC_DEVICE = 'ipsec0';

/** Connection / pool / secret names of a user (usernames are letters, digits, `_`, `-`). */
export const connName = (username: string): string => `u-${username}`;
export const poolName = (username: string): string => `p-${username}`;
export const secretName = (username: string): string => `s-${username}`;
