// Windows' built-in IKEv2 client: a PowerShell script that trusts the CA and creates the VPN connection.
import { proposalList } from '../../dataplane/render/swanctl-tree.ts';

/** `Set-VpnConnectionIPsecConfiguration` parameters (Windows' names) for one IKE and one ESP proposal. */
export interface WindowsIpsecParams {
  EncryptionMethod: string;
  IntegrityCheckMethod: string;
  DHGroup: string;
  CipherTransformConstants: string;
  AuthenticationTransformConstants: string;
  PfsGroup: string;
}

const CIPHER: Record<string, string> = { aes128: 'AES128', aes192: 'AES192', aes256: 'AES256', '3des': 'DES3' };
const GCM: Record<string, string> = { aes128gcm16: 'GCMAES128', aes256gcm16: 'GCMAES256', aes192gcm16: 'GCMAES192' };
const INTEGRITY: Record<string, string> = { sha1: 'SHA1', sha256: 'SHA256', sha384: 'SHA384', prfsha1: 'SHA1', prfsha256: 'SHA256', prfsha384: 'SHA384' };
const ESP_AUTH: Record<string, string> = { sha1: 'SHA196', sha256: 'SHA256128' };
const DH: Record<string, string> = { modp768: 'Group1', modp1024: 'Group2', modp2048: 'Group14', ecp256: 'ECP256', ecp384: 'ECP384' };
const PFS: Record<string, string> = { modp768: 'PFS1', modp1024: 'PFS2', modp2048: 'PFS2048', ecp256: 'ECP256', ecp384: 'ECP384' };

/** An IKE proposal (`enc-integ[-prf]-dh`) as Windows' IKE parameters, or null when Windows has no such algorithm. */
function ikeOf(proposal: string): Pick<WindowsIpsecParams, 'EncryptionMethod' | 'IntegrityCheckMethod' | 'DHGroup'> | null {
  const [enc, ...rest] = proposal.split('-');
  const dh = rest.map((p) => DH[p]).find(Boolean);
  const integ = rest.map((p) => INTEGRITY[p]).find(Boolean);
  const cipher = CIPHER[enc] ?? GCM[enc];
  if (!cipher || !dh || !integ || rest.some((p) => !DH[p] && !INTEGRITY[p])) return null;
  return { EncryptionMethod: cipher, IntegrityCheckMethod: integ, DHGroup: dh };
}

/** An ESP proposal (`enc[-integ][-dh]`) as Windows' transform constants, or null when Windows cannot express it. */
function espOf(proposal: string): Pick<WindowsIpsecParams, 'CipherTransformConstants' | 'AuthenticationTransformConstants' | 'PfsGroup'> | null {
  const [enc, ...rest] = proposal.split('-');
  const pfs = rest.map((p) => PFS[p]).find(Boolean) ?? 'None';
  if (GCM[enc]) {
    if (rest.some((p) => !PFS[p])) return null;
    return { CipherTransformConstants: GCM[enc], AuthenticationTransformConstants: GCM[enc], PfsGroup: pfs };
  }
  const auth = rest.map((p) => ESP_AUTH[p]).find(Boolean);
  if (!CIPHER[enc] || !auth || rest.some((p) => !PFS[p] && !ESP_AUTH[p])) return null;
  return { CipherTransformConstants: CIPHER[enc], AuthenticationTransformConstants: auth, PfsGroup: pfs };
}

/**
 * The first IKE and the first ESP proposal of the server's lists (the operator's order) that Windows can offer, as
 * `Set-VpnConnectionIPsecConfiguration` parameters; null when either list has none (Windows' own defaults are
 * AES-256/SHA-1/MODP-1024 and ESP AES-256/SHA-1, the first entries of the spec's default lists).
 */
export function windowsIpsecParams(ike: string, esp: string): WindowsIpsecParams | null {
  const i = proposalList(ike).map(ikeOf).find(Boolean);
  const e = proposalList(esp).map(espOf).find(Boolean);
  return i && e ? { ...i, ...e } : null;
}

/** A PowerShell single-quoted string (`'` doubled; no expansion). */
export function psQuote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** What the script needs. */
export interface WindowsProfileInput {
  /** Connection name shown in Windows' VPN settings. */
  name: string;
  /** The server's address and certificate name (`server_domain`). */
  server: string;
  /** The account's username (its EAP identity). */
  username: string;
  /** The CA certificate, base64 DER. */
  caDerBase64: string;
  ike: string;
  esp: string;
}

/**
 * The script (run elevated): the CA into the computer's trusted roots, an IKEv2 connection with EAP (EAP-MSCHAPv2,
 * Windows' default EAP method) created or replaced, its IPsec parameters set to a proposal the server accepts.
 * Windows sends its IP address as IKE identity; the panel serves it through its shared EAP connection.
 */
export function renderWindowsProfile(p: WindowsProfileInput): string {
  const params = windowsIpsecParams(p.ike, p.esp);
  const ipsec = params
    ? `Set-VpnConnectionIPsecConfiguration -ConnectionName $Name ${Object.entries(params).map(([k, v]) => `-${k} ${v}`).join(' ')} -Force`
    : '# None of the server\'s IKE/ESP proposals can be expressed on Windows: Windows keeps its defaults (ask your provider).';
  return [
    `# IKEv2 VPN connection ${p.name} for Windows' built-in client (vpnhost).`,
    '# Run it in an elevated PowerShell:  powershell -ExecutionPolicy Bypass -File .\\<this file>.ps1',
    '# It trusts the provider\'s CA for this computer, then creates (or replaces) the connection.',
    "$ErrorActionPreference = 'Stop'",
    `$Name = ${psQuote(p.name)}`,
    `$Server = ${psQuote(p.server)}`,
    `$CaFile = Join-Path $env:TEMP ${psQuote(`vpnhost-ca-${p.server}.cer`)}`,
    `[IO.File]::WriteAllBytes($CaFile, [Convert]::FromBase64String(${psQuote(p.caDerBase64)}))`,
    'Import-Certificate -FilePath $CaFile -CertStoreLocation Cert:\\LocalMachine\\Root | Out-Null',
    'Remove-Item $CaFile',
    'if (Get-VpnConnection -Name $Name -ErrorAction SilentlyContinue) { Remove-VpnConnection -Name $Name -Force }',
    'Add-VpnConnection -Name $Name -ServerAddress $Server -TunnelType Ikev2 -AuthenticationMethod Eap -EncryptionLevel Required -RememberCredential',
    ipsec,
    `Write-Host ${psQuote(`Connection ${p.name} created. Connect and sign in with the user name ${p.username} and your password.`)}`,
    '',
  ].join('\r\n');
}
