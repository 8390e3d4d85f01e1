// The error catalogue of the HTTP layer: every refusal text with its HTTP status, in one table; ApiError.
import { FIREWALL_TEXTS } from '../dataplane/firewall/firewall-texts.ts';
import { E, OWN } from '../../shared/wire/error-texts.ts';

export { E, OWN, CHARONDEBUG_SUBSYSTEMS, charondebugError, type SeedErrorText } from '../../shared/wire/error-texts.ts';
export { FIREWALL_TEXTS } from '../dataplane/firewall/firewall-texts.ts';

/**
 * Every refusal text whose HTTP status is not 400, grouped by status. This table is the one place a status is
 * chosen: {@link statusForText} reads it, the error mapper applies it, and `ApiError` carries no status of its own.
 * The spec shows no status codes; the groups follow what a text says:
 * - 401 the authorization failure;
 * - 404 a named object that does not exist;
 * - 409 a clash with the current state (everything "already in use", limits, missing prerequisites);
 * - 413/415 the body's size and media type;
 * - 422 a well-formed value that does not fit the stored state (an unknown referenced object, an address outside
 *   the server range, a port the panel itself listens on) and the shaper's refusals (`shaping: ...`, e.g. a limited
 *   peer beyond host 65,534 of a wider-than-/16 subnet);
 * - 500 a failure of the host (the `...:` prefixes of backup creation and restore, the DNS resolver);
 * - 400 every other text (validation of a single value).
 */
const STATUS_GROUPS: ReadonlyArray<readonly [number, readonly string[]]> = [
  [401, [E.NOT_AUTHORIZED]],
  [404, [E.WIREGUARD_SERVER_NOT_FOUND, E.ACCOUNT_NOT_FOUND, OWN.NOT_FOUND, OWN.OTL_NOT_FOUND]],
  [409, [
    E.CONTROLPANEL_STATUS_NOT_OK, E.NAME_IN_USE, E.INTERFACE_IN_USE, E.PORT_IN_USE, E.IP_OR_SUBNET_IN_USE,
    E.ACTIVE_PEERS, E.PF_ALREADY_ENABLED, E.ACCOUNT_LIMIT_EXCEEDED, E.USERNAME_IN_USE, E.IP_IN_USE,
    E.FW_RULE_EXISTS, E.FW_RULE_BUILTIN, E.LICENSE_NOT_ACTIVE, E.ROOT_CERT_ALREADY_PRESENT,
    E.ROOT_CERT_NOT_PRESENT_UPPER, E.ROOT_CERT_NOT_PRESENT, E.SERVER_CERT_NOT_PRESENT, E.TL_TSDB_NOT_INSTALLED,
    OWN.NO_FREE_SUBNET, OWN.NO_FREE_PORT, FIREWALL_TEXTS.MARK_IN_USE,
  ]],
  [413, [OWN.BODY_TOO_LARGE]],
  [415, [OWN.UNSUPPORTED_MEDIA_TYPE]],
  [422, [
    E.WIREGUARD_SERVER_NOT_VALID, E.IP_NOT_IN_RANGE, E.PF_INCORRECT_PEER, E.PF_DST_IS_LISTEN_PORT,
    E.PF_NO_SUCH, E.FW_RULE_NOT_FOUND, E.BACKUP_NO_SUCH, OWN.PEERS_OUTSIDE_ADDRESS, OWN.NO_EXTERNAL_IP,
    OWN.IKE_DAEMON_FAILED, FIREWALL_TEXTS.DST_IS_API_PORT,
  ]],
  [500, [
    E.BACKUP_CREATION, E.BACKUP_FTP_UPLOAD, E.BACKUP_DELETE_OLD_CONFIG, E.BACKUP_OPEN_ARCHIVE, E.BACKUP_CREATE_FOLDER,
    E.BACKUP_CREATE_FILE, E.BACKUP_UNZIP_FILE, OWN.DNS_FAILED, OWN.INTERNAL,
  ]],
];

/** Families of texts made at run time, by prefix: a shaper refusal (`shaping: ...`) is 422. */
const PREFIX_STATUS: ReadonlyArray<readonly [string, number]> = [['shaping:', 422]];

/** Text → status for every text of {@link STATUS_GROUPS}. */
export const REFUSAL_STATUS: ReadonlyMap<string, number> = new Map(
  STATUS_GROUPS.flatMap(([status, texts]) => texts.map((text) => [text, status] as const)),
);

/** The HTTP status of a refusal text: its entry in the catalogue, its prefix family's, or 400. */
export function statusForText(text: string): number {
  const exact = REFUSAL_STATUS.get(text);
  if (exact !== undefined) return exact;
  for (const [prefix, status] of PREFIX_STATUS) if (text.startsWith(prefix)) return status;
  return 400;
}

/** `text` followed by its detail, for the spec's texts ending in a colon. */
function withDetail(text: string, detail?: string): string {
  return detail ? `${text} ${detail}` : text;
}

/**
 * A refusal shown to the client in the envelope. Throw it from services and routes; the error mapper answers
 * `{"error": message, "msg": "", "status": "error"}` with the catalogue's status for `text`
 * ({@link statusForText}). `detail` is appended to texts ending in a colon.
 */
export class ApiError extends Error {
  constructor(readonly text: string, detail?: string) {
    super(withDetail(text, detail));
    this.name = 'ApiError';
  }

  /** The catalogue's HTTP status for this error's text. */
  get httpStatus(): number {
    return statusForText(this.text);
  }
}

/** Whether `value` is an ApiError (also across module copies). */
export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError || (value instanceof Error && value.name === 'ApiError' && 'text' in value);
}
