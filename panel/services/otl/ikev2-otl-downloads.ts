// Ikev2Downloads over the IKEv2 services: the CA certificate and the `.sswan` profile where the account may use IKEv2.
import type { Ikev2Row } from '../../store/repositories/ikev2.ts';
import type { AccountWithServer } from '../../store/repositories/accounts.ts';
import type { Ikev2Downloads, OtlDownload } from './ikev2-downloads.ts';

/** What the adapter reads: the IKEv2 settings row, an account, its server's `ikev2` flag, the `.sswan` profile. */
export interface Ikev2OtlSource {
  ikev2Row(): Ikev2Row;
  account(name: string): AccountWithServer | undefined;
  serverOffersIkev2(serverId: number): boolean;
  sswan(name: string): string;
}

/**
 * The page's IKEv2 files, offered only when IKEv2 is enabled with both certificates present and the account's
 * server has `ikev2=1`: the CA as `ca.crt` (PEM, what Android and iOS install as a trusted root) and the
 * strongSwan app's profile as `<account>.sswan` (the text of GET /account/<name>/ikev2_profile).
 */
export function ikev2OtlDownloads(source: Ikev2OtlSource): Ikev2Downloads {
  const offered = (name: string): { row: Ikev2Row } | null => {
    const row = source.ikev2Row();
    if (!row.enabled || !row.ca_cert || !row.server_cert) return null;
    const account = source.account(name);
    return account && source.serverOffersIkev2(account.server_id) ? { row } : null;
  };
  return {
    caCertificate: async (name): Promise<OtlDownload | null> => {
      const on = offered(name);
      return on && { filename: 'ca.crt', contentType: 'application/x-x509-ca-cert', body: on.row.ca_cert };
    },
    profile: async (name): Promise<OtlDownload | null> =>
      offered(name) && { filename: `${name}.sswan`, contentType: 'application/vnd.strongswan.profile', body: source.sswan(name) },
  };
}
