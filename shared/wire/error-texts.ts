// The panel API's error texts: every seed text of the spec byte for byte, once; pure so the module may import it.

/**
 * Every error text of the spec's Errors section, once. A text ending in a colon is a prefix: pass the detail to
 * `ApiError` (or `withDetail`) and it is appended after one space.
 */
export const E = {
  // All endpoints
  NOT_AUTHORIZED: 'Not authorized',
  // Not-found texts
  WIREGUARD_SERVER_NOT_FOUND: 'Wireguard server not found',
  ACCOUNT_NOT_FOUND: 'Account not found',
  // PUT /system/reload, PUT /backups/restore
  CONTROLPANEL_STATUS_NOT_OK: 'CONTROLPANEL status not OK',
  // POST/PUT /wireguard
  NAME_IN_USE: 'The name is already in use',
  WRONG_INTERFACE_NAME: 'Wrong network interface name (wgXXX)',
  WRONG_NAME: "Wrong name (only letters, numbers and '_', '-')",
  KEYS_INVALID: 'Keys are invalid',
  INTERFACE_IN_USE: 'Interface already in use',
  PORT_IN_USE: 'Port already in use',
  WRONG_EXTERNAL_IP: 'Wrong external IP format',
  WRONG_PORT: 'Wrong Port format',
  IP_OR_SUBNET_IN_USE: 'IP address or subnet already in use',
  WRONG_DNS1: 'Wrong DNS1 IP format',
  WRONG_DNS2: 'Wrong DNS2 IP format',
  // DELETE /wireguard/<name>
  ACTIVE_PEERS: 'Cannot be deleted. There are active peers.',
  // POST /port_forward
  PF_PROTOCOL: 'Protocol must be tcp or udp',
  PF_DST_PORT_RANGE: 'DST port must be within 1-65535',
  PF_ALREADY_ENABLED: 'DST port and protocol are already enabled',
  PF_LISTEN_PORT_ERROR: 'ListenPort processing error',
  PF_DST_IS_LISTEN_PORT: 'DstPort cannot be ListenPort',
  PF_TO_PORT_RANGE: 'To port must be within 1-65535',
  PF_INCORRECT_PEER: 'Entered incorrect peer',
  // DELETE /port_forward/...
  PF_NO_SUCH: 'There is no such port forwarding',
  PF_INCORRECT_PROTOCOL_PARAM: 'Incorrect protocol parameter (tcp|udp)',
  PF_INCORRECT_DST_PORT_PARAM: 'Incorrect dst_port parameter',
  // POST/PUT /account
  ACCOUNT_LIMIT_EXCEEDED: 'VPN account limit exceeded',
  WIREGUARD_SERVER_NOT_VALID: 'Wireguard server not valid',
  USERNAME_IN_USE: 'The username is already in use',
  WRONG_USERNAME: "Wrong Username (only letters, numbers and '_', '-')",
  WRONG_IP: 'Wrong IP format',
  IP_IN_USE: 'IP address already in use',
  IP_NOT_IN_RANGE: 'The IP address is not within the range of the wireguard server',
  // GET traffic_statistics
  WRONG_MONTH: 'Wrong month setting',
  WRONG_YEAR: 'Wrong year setting',
  // PUT /firewall/conf
  FW_POLICY_INPUT: 'Wrong parameter: INPUT policy, should be: ACCEPT or DROP',
  FW_POLICY_FORWARD: 'Wrong parameter: FORWARD policy, should be: ACCEPT or DROP',
  FW_POLICY_OUTPUT: 'Wrong parameter: OUTPUT policy, should be: ACCEPT or DROP',
  // POST /firewall/rules/filter/(top|end)
  FW_RULE_NAME: 'Wrong rule name. Must be letters and numbers only',
  FW_RULE_EXISTS: 'A rule with the same name already exists',
  FW_CHAIN: 'Not correct Chain',
  FW_DST_CIDR: 'Destination IP must be in CIDR format',
  FW_SRC_CIDR: 'Source IP must be in CIDR format',
  // DELETE /firewall/rules/filter/<rule_name>
  FW_RULE_NOT_FOUND: 'No rule found with given name',
  FW_RULE_BUILTIN: 'You cannot delete this rule. ONLY name=system_CONTROLPANEL',
  // GET /license, GET /dns
  LICENSE_NOT_ACTIVE: 'The license is not active',
  // PUT /dns
  DNS_FORWARDER1: 'Incorrect data in Forwarder1 parameters',
  DNS_FORWARDER2: 'Incorrect data in Forwarder2 parameters',
  // PUT /system/config (the frequency text says 2147483647; the enforced range is 1-1440)
  CONFIG_FREQUENCY: 'Incorrect value Traffic Statistics Frequency (should be 1 to 2147483647)',
  CONFIG_HISTORY: 'Incorrect value Traffic Statistics History (should be 0 to 2147483647)',
  CONFIG_HANDSHAKE: 'Incorrect value Wireguard Handshake Uptime (should be 1 to 300)',
  // IKEv2 certificates
  ROOT_CERT_ALREADY_PRESENT: 'The root certificate is already in the system',
  CA_CERT_MUST_BE_FILLED: 'CaCert must be filled',
  CA_KEY_MUST_BE_FILLED: 'CaKey must be filled',
  CERTIFICATE_NOT_FOUND: 'Certificate not found',
  CERTIFICATE_FAILED: 'Certificate failed',
  COMMON_NAME_MUST_BE_FILLED: 'Common Name must be filled',
  ORGANIZATION_MUST_BE_FILLED: 'Organization must be filled',
  ROOT_CERT_NOT_PRESENT_UPPER: 'The ROOT certificate is not present in the system',
  ROOT_CERT_NOT_PRESENT: 'The root certificate is not present in the system',
  SERVER_DOMAIN_MUST_BE_FILLED: 'Server Domain must be filled',
  SERVER_IP_MUST_BE_FILLED: 'Server IP must be filled',
  SERVER_CERT_NOT_PRESENT: 'The SERVER certificate is not present in the system',
  // PUT /ikev2/advanced_settings (Charondebug texts come from `charondebugError`)
  IKE_UNIQUEIDS: 'Incorrect value Uniqueids (should be yes|no|never|replace|keep)',
  IKE_STRICTCRLPOLICY: 'Incorrect value Strictcrlpolicy (should be yes|no|ifuri)',
  IKE_AUTHBY: 'Incorrect value Authby (should be pubkey|rsasig|ecdsasig|psk|secret|xauthrsasig|xauthpsk|never)',
  IKE_CLOSEACTION: 'Incorrect value Closeaction (should be none|clear|hold|restart)',
  IKE_COMPRESS: 'Incorrect value Compress (should be yes|no)',
  IKE_DPDDELAY: 'Incorrect value Dpddelay (should be 0 to 2147483647)',
  IKE_DPDTIMEOUT: 'Incorrect value Dpdtimeout (should be 0 to 2147483647)',
  IKE_INACTIVITY: 'Incorrect value Inactivity (should be 0 to 2147483647)',
  IKE_ESP_MUST_BE_FILLED: 'Esp must be filled',
  IKE_FORCEENCAPS: 'Incorrect value Forceencaps (should be yes|no)',
  /** The spec's text for `fragmentation` (it names Forceencaps but lists the fragmentation values). */
  IKE_FRAGMENTATION: 'Incorrect value Forceencaps (should be yes|accept|force|no)',
  IKE_IKE_MUST_BE_FILLED: 'Ike must be filled',
  IKE_IKELIFETIME: 'Incorrect value Ikelifetime (should be 0 to 2147483647)',
  IKE_INSTALLPOLICY: 'Incorrect value Installpolicy (should be yes|no)',
  IKE_KEYINGTRIES: 'Incorrect value Keyingtries (should be 1 to 2147483647)',
  IKE_LIFETIME: 'Incorrect value Lifetime (should be 1 to 86400)',
  IKE_MARGINTIME: 'Incorrect value Margintime (should be 1 to 2147483647)',
  IKE_MOBIKE: 'Incorrect value Mobike (should be yes|no)',
  IKE_MODECONFIG: 'Incorrect value Modeconfig (should be push|pull)',
  IKE_REAUTH: 'Incorrect value Reauth (should be yes|no)',
  IKE_REKEY: 'Incorrect value Rekey (should be yes|no)',
  /** The spec's second Keyingtries text (0 lower bound); listed where `rekeyfuzz` would be checked. */
  IKE_KEYINGTRIES_ZERO: 'Incorrect value Keyingtries (should be 0 to 2147483647)',
  IKE_TYPE: 'Incorrect value Type (should be tunnel|transport|transport_proxy|passthrough|drop)',
  // PUT /traffic_logging
  TL_SYSLOG_SERVER_MUST_BE_FILLED: 'Remote Syslog Server must be filled',
  TL_TSDB_NOT_INSTALLED: 'TSDB agent not installed',
  TL_TSDB_URL_MUST_BE_FILLED: 'TSDB Url must be filled',
  TL_TSDB_TOKEN_MUST_BE_FILLED: 'TSDB Token must be filled',
  TL_TSDB_BUCKET_MUST_BE_FILLED: 'TSDB Bucket must be filled',
  TL_TSDB_ORGANIZATION_MUST_BE_FILLED: 'TSDB Organization must be filled',
  TL_ONE_METHOD: 'At least one logging method must be enabled (Remote Syslog or/and TSDB)',
  // POST /backups (prefixes)
  BACKUP_CREATION: 'Error backup creation:',
  BACKUP_FTP_UPLOAD: 'FTP upload error:',
  // PUT /backups/restore
  BACKUP_NO_SUCH: 'There is no backup with this name',
  BACKUP_READER: 'Error backup reader:',
  BACKUP_EMPTY_FILE_LIST: 'Empty list of files in file with file list',
  BACKUP_EMPTY_ARCHIVE: 'Empty archive',
  BACKUP_FILE_COUNT_MISMATCH: 'The number of files in the archive does not match the list of files in the file',
  BACKUP_FILE_MISMATCH: 'Mismatch between files in archive and list of files',
  BACKUP_DELETE_OLD_CONFIG: 'Unable to delete old configuration:',
  BACKUP_OPEN_ARCHIVE: 'Failed to open archive, ERROR:',
  BACKUP_CREATE_FOLDER: 'Failed to create folder:',
  BACKUP_CREATE_FILE: 'Failed to create file:',
  BACKUP_UNZIP_FILE: 'Failed to unzip file:',
  // PUT /backups/config
  BACKUP_CFG_HOUR_MINUTE: 'In every hour schedule, the minute parameter must be between 0 and 59',
  BACKUP_CFG_DAY_HOUR: 'In the daily schedule, the hour parameter must be between 0 and 23',
  BACKUP_CFG_DAY_MINUTE: 'In a daily schedule, the minute parameter must be between 0 and 59',
  BACKUP_CFG_NUMBER: 'Number backups parameter must be greater than 0',
  BACKUP_CFG_FTP_SERVER: 'FTP server must be filled',
  BACKUP_CFG_FTP_USER: 'FTP user must be filled',
  BACKUP_CFG_FTP_PASSWORD: 'FTP password must be filled',
} as const;

/** The charondebug subsystems, in the spec's order of checks. */
export const CHARONDEBUG_SUBSYSTEMS = [
  'dmn', 'mgr', 'ike', 'chd', 'job', 'cfg', 'knl', 'net', 'asn', 'enc', 'lib', 'esp', 'tls', 'tnc', 'imc', 'imv', 'pts',
] as const;

/** `Incorrect value Charondebug <xxx> (should be -1 to 4)` for one subsystem. */
export function charondebugError(subsystem: (typeof CHARONDEBUG_SUBSYSTEMS)[number]): string {
  return `Incorrect value Charondebug ${subsystem} (should be -1 to 4)`;
}

/** Texts of our own (the spec leaves these cases open); kept apart from the seed texts. */
export const OWN = {
  NOT_FOUND: 'Not found',
  MALFORMED_BODY: 'Malformed request body',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported content type',
  BODY_TOO_LARGE: 'Request body too large',
  BAD_REQUEST: 'Bad request',
  INTERNAL: 'Internal server error',
  // WireGuard servers and accounts: parameters the spec gives no error text for
  WRONG_ADDRESS: 'Wrong address format (IPv4 CIDR of a host in a /30 or wider subnet)',
  WRONG_MTU: 'Wrong MTU format (0 or 68-9100)',
  WRONG_KEEP_ALIVE: 'Wrong keep_alive format (0-2147483647)',
  WRONG_ALLOWED_IPS: 'Wrong allowed_ips format (comma-separated CIDR list)',
  WRONG_ENDPOINT: 'Wrong endpoint format (IP address or domain)',
  WRONG_INTERNAL_TRAFFIC: 'Wrong internal_traffic format (1 or 0)',
  WRONG_IP_FORWARD: 'Wrong ip_forward format (1 or 0)',
  WRONG_IPV6_FLAG: 'Wrong ipv6 format (1 or 0)',
  WRONG_IKEV2_FLAG: 'Wrong ikev2 format (1 or 0)',
  WRONG_ADDRESS_IPV6: 'Wrong address_ipv6 format (IPv6 CIDR)',
  WRONG_DNS1_IPV6: 'Wrong DNS1 IPv6 format',
  WRONG_DNS2_IPV6: 'Wrong DNS2 IPv6 format',
  WRONG_B_DOWNLOAD: 'Wrong b_download format (0-10000)',
  WRONG_B_UPLOAD: 'Wrong b_upload format (0-10000)',
  WRONG_STATUS: 'Wrong status (enable or disable)',
  WRONG_PASSWORD: 'Wrong password format (1-128 printable characters)',
  PEERS_OUTSIDE_ADDRESS: 'Accounts of this server would lie outside the new address range',
  NO_FREE_SUBNET: 'No free subnet for a new wireguard server',
  NO_FREE_PORT: 'No free listen port for a new wireguard server',
  NO_EXTERNAL_IP: 'External IP not detected (no default route); pass external_ip',
  /** A server or peer address in a range no tunnel may use (see RESERVED_RANGES in panel/schemas/ip.ts). */
  RESERVED_ADDRESS: 'Address in a reserved range (loopback, unspecified, link-local, multicast, broadcast or IPv4-mapped)',
  // One-time links (PUT /otl/config*, DELETE /otl/<key>: extensions the spec gives no text for)
  OTL_WRONG_LIFETIME: 'Wrong lifetime format (whole days 1-365)',
  OTL_NOT_FOUND: 'One-time link not found',
  // GET /traffic_statistics (every account's days: an extension of the spec)
  WRONG_DATE_RANGE: 'Wrong date range (from and to as YYYY-MM-DD, from not after to, at most 62 days)',
  // PUT /traffic_logging: formats the spec gives no text for
  TL_WRONG_SYSLOG_SERVER: 'Wrong remote_syslog_server format (IPv4 address)',
  TL_WRONG_SYSLOG_PORT: 'Wrong remote_syslog_server_port format (1-65535)',
  TL_WRONG_TSDB_URL: 'Wrong tsdb_url format (http or https URL)',
  TL_WRONG_TSDB_TEXT: 'Wrong tsdb field format (at most 1024 printable characters)',
  // PUT /dns: the TTL range and a resolver the host refuses (the spec gives no text for either)
  DNS_MAX_CACHE_TTL: 'Incorrect value Max Cache TTL (should be 30 to 3600)',
  DNS_FAILED: 'DNS resolver error:',
  // IKEv2: formats and states the spec gives no text for
  IKE_WRONG_SUBJECT: 'Wrong certificate field format (at most 128 printable characters)',
  IKE_WRONG_DOMAIN: 'Wrong server_domain format (DNS name)',
  IKE_WRONG_SERVER_IP: 'Wrong server_ip format (IPv4 address)',
  IKE_WRONG_SERVER_IPV6: 'Wrong server_ipv6 format (IPv6 address)',
  IKE_WRONG_ENABLED: 'Wrong enabled format (1 or 0)',
  IKE_DPDACTION: 'Incorrect value Dpdaction (should be none|clear|hold|restart)',
  IKE_WRONG_PROPOSALS: 'Wrong proposal format (algorithm keywords joined by - and , with an optional trailing !)',
  IKE_NOT_ENABLED: 'IKEv2 is not enabled',
  IKE_SERVER_NOT_ENABLED: 'IKEv2 is not enabled on the wireguard server of this account',
  IKE_DAEMON_FAILED: 'IKEv2 daemon failed:',
  // PUT /backups/config: formats the spec gives no text for
  BACKUP_WRONG_FTP_PORT: 'Wrong ftp_server_port format (1-65535)',
  BACKUP_WRONG_FTP_TEXT: 'Wrong ftp field format (at most 1024 printable characters)',
} as const;

/** `Wrong <flag> format (1 or 0)` for a boolean field given as anything but 1/0/true/false (our own text). */
export function flagFormatError(name: string): string {
  return `Wrong ${name} format (1 or 0)`;
}

/** `Wrong <name> format (...)` for a one-time-link page text that is not a string of at most 65536 characters. */
export function otlTextFormatError(name: string): string {
  return `Wrong ${name} format (text of at most 65536 characters)`;
}

/** `Wrong <name> format (...)` for a one-time-link button link that is neither empty nor an absolute URL. */
export function otlLinkFormatError(name: string): string {
  return `Wrong ${name} format (empty or an absolute URL; not javascript:, data:, vbscript: or file:)`;
}

/** Any seed error text. */
export type SeedErrorText = (typeof E)[keyof typeof E];
