// IKEv2 client profiles of an account: the strongSwan Android app's `.sswan` JSON and an Apple `.mobileconfig`.
import { createHash } from 'node:crypto';
import { ApiError, OWN } from '../../http/errors.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { AccountWithServer } from '../../store/repositories/accounts.ts';
import type { Ikev2Repository, Ikev2Row } from '../../store/repositories/ikev2.ts';
import type { ServerRow } from '../../store/repositories/servers.ts';
import { pemToDerBase64, subjectOf } from './pki.ts';
import { renderWindowsProfile } from './windows-profile.ts';
import forge from 'node-forge';

/** Collaborators of {@link Ikev2Profiles}. */
export interface Ikev2ProfilesDeps {
  repo: Ikev2Repository;
  box: SecretBox;
  account(name: string): AccountWithServer;
  server(id: number): ServerRow;
}

/** A UUID (RFC 4122 layout, version 5 bits) derived from `parts`: the same account always gets the same one. */
function stableUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/**
 * Profiles for an account that may use IKEv2 (certificates present, its server has `ikev2=1`). The server is
 * addressed and identified by `server_domain` (a SAN of its certificate); the client's IKE and EAP identity is the
 * account's `username` (its EAP identity, which gives it its own address). The password is included only when the
 * operator opted in (`profile_password`).
 */
export class Ikev2Profiles {
  constructor(private readonly deps: Ikev2ProfilesDeps) {}

  /** GET /account/<name>/ikev2_profile: the `.sswan` JSON text (type `ikev2-eap`). */
  sswan(name: string): string {
    const { account, row } = this.require(name);
    const profile: Record<string, unknown> = {
      uuid: stableUuid('vpnhost-ikev2-sswan', account.name),
      name: `${row.server_domain} (${account.name})`,
      type: 'ikev2-eap',
      remote: { addr: row.server_domain, cert: pemToDerBase64(row.ca_cert), id: row.server_domain },
      local: { eap_id: account.username, ...(row.profile_password ? { password: this.deps.box.open(account.password) } : {}) },
    };
    return JSON.stringify(profile);
  }

  /**
   * GET /account/<name>/ikev2_mobileconfig (extension): an unsigned Apple configuration profile with the CA
   * (com.apple.security.root) and an IKEv2 VPN payload (EAP, server by certificate, the spec's default
   * AES-256-GCM/SHA2-384/ECP-384 proposal that macOS and iOS both offer).
   */
  mobileconfig(name: string): string {
    const { account, row } = this.require(name);
    const caUuid = stableUuid('vpnhost-ikev2-ca', row.ca_cert).toUpperCase();
    const vpnUuid = stableUuid('vpnhost-ikev2-vpn', account.name).toUpperCase();
    const topUuid = stableUuid('vpnhost-ikev2-profile', account.name).toUpperCase();
    const caCn = subjectOf(forge.pki.certificateFromPem(row.ca_cert)).common_name;
    const sa = (dh: number) => dict({ EncryptionAlgorithm: 'AES-256-GCM', IntegrityAlgorithm: 'SHA2-384', DiffieHellmanGroup: dh, LifeTimeInMinutes: 1440 });
    const ikev2: Record<string, Plist> = {
      RemoteAddress: row.server_domain, RemoteIdentifier: row.server_domain, LocalIdentifier: account.username,
      AuthenticationMethod: 'None', ExtendedAuthEnabled: 1, AuthName: account.username,
      ...(row.profile_password ? { AuthPassword: this.deps.box.open(account.password) } : {}),
      ServerCertificateIssuerCommonName: caCn, ServerCertificateCommonName: row.server_common_name,
      EnablePFS: 1, IKESecurityAssociationParameters: sa(20), ChildSecurityAssociationParameters: sa(20),
    };
    const payloads: Plist[] = [
      dict({
        PayloadType: 'com.apple.security.root', PayloadVersion: 1, PayloadIdentifier: `vpnhost.ca.${caUuid}`, PayloadUUID: caUuid,
        PayloadDisplayName: caCn, PayloadContent: { data: pemToDerBase64(row.ca_cert) },
      }),
      dict({
        PayloadType: 'com.apple.vpn.managed', PayloadVersion: 1, PayloadIdentifier: `vpnhost.vpn.${vpnUuid}`, PayloadUUID: vpnUuid,
        PayloadDisplayName: `${row.server_domain} (${account.name})`, UserDefinedName: `${row.server_domain} (${account.name})`,
        VPNType: 'IKEv2', IKEv2: dict(ikev2),
      }),
    ];
    const top = dict({
      PayloadType: 'Configuration', PayloadVersion: 1, PayloadIdentifier: `vpnhost.${topUuid}`, PayloadUUID: topUuid,
      PayloadDisplayName: `VPN ${row.server_domain}`, PayloadContent: payloads,
    });
    return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n${renderPlist(top, '')}\n</plist>\n`;
  }

  /**
   * GET /account/<name>/ikev2_windows (extension): a PowerShell script for Windows' built-in client (CA into the
   * computer's trusted roots, IKEv2 connection with EAP, IPsec parameters from the server's proposals). It holds no
   * password: Windows asks for it at the first connect.
   */
  windows(name: string): string {
    const { account, row } = this.require(name);
    return renderWindowsProfile({
      name: `${row.server_domain} (${account.name})`, server: row.server_domain, username: account.username,
      caDerBase64: pemToDerBase64(row.ca_cert), ike: row.advanced.ike, esp: row.advanced.esp,
    });
  }

  private require(name: string): { account: AccountWithServer; row: Ikev2Row } {
    const account = this.deps.account(name);
    const row = this.deps.repo.get();
    if (!row.ca_cert || !row.server_cert) throw new ApiError(OWN.IKE_NOT_ENABLED);
    if (!this.deps.server(account.server_id).ikev2) throw new ApiError(OWN.IKE_SERVER_NOT_ENABLED);
    return { account, row };
  }
}

/** A property-list value: string, integer, `{data}` (base64), array or dictionary. */
type Plist = string | number | { data: string } | Plist[] | { dict: Record<string, Plist> };

function dict(entries: Record<string, Plist>): Plist {
  return { dict: entries };
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function renderPlist(value: Plist, indent: string): string {
  if (typeof value === 'string') return `${indent}<string>${xml(value)}</string>`;
  if (typeof value === 'number') return `${indent}<integer>${value}</integer>`;
  if (Array.isArray(value)) return `${indent}<array>\n${value.map((v) => renderPlist(v, `${indent}  `)).join('\n')}\n${indent}</array>`;
  if ('data' in value) return `${indent}<data>${value.data}</data>`;
  const body = Object.entries(value.dict).map(([k, v]) => `${indent}  <key>${xml(k)}</key>\n${renderPlist(v, `${indent}  `)}`);
  return `${indent}<dict>\n${body.join('\n')}\n${indent}</dict>`;
}
