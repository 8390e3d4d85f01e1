// The error catalogue of the HTTP layer: the seed texts (defined in panel/schemas/error-texts.ts), ApiError, status map.
import { E, OWN } from '../schemas/error-texts.ts';

export { E, OWN, CHARONDEBUG_SUBSYSTEMS, charondebugError, type SeedErrorText } from '../schemas/error-texts.ts';

const NOT_FOUND_TEXTS = new Set<string>([E.WIREGUARD_SERVER_NOT_FOUND, E.ACCOUNT_NOT_FOUND, OWN.NOT_FOUND]);

/** Texts that describe a clash with the current state rather than a malformed input: HTTP 409. */
const CONFLICT_TEXTS = new Set<string>([
  E.CONTROLPANEL_STATUS_NOT_OK, E.NAME_IN_USE, E.INTERFACE_IN_USE, E.PORT_IN_USE, E.IP_OR_SUBNET_IN_USE,
  E.ACTIVE_PEERS, E.PF_ALREADY_ENABLED, E.ACCOUNT_LIMIT_EXCEEDED, E.USERNAME_IN_USE, E.IP_IN_USE,
  E.FW_RULE_EXISTS, E.FW_RULE_BUILTIN, E.LICENSE_NOT_ACTIVE, E.ROOT_CERT_ALREADY_PRESENT,
  E.ROOT_CERT_NOT_PRESENT_UPPER, E.ROOT_CERT_NOT_PRESENT, E.SERVER_CERT_NOT_PRESENT, E.TL_TSDB_NOT_INSTALLED,
  OWN.NO_FREE_SUBNET, OWN.NO_FREE_PORT,
]);

/**
 * Texts that name a well-formed value that does not fit the stored state (unknown referenced object, address
 * outside the server range, missing rule/backup/forward): HTTP 422.
 */
const UNPROCESSABLE_TEXTS = new Set<string>([
  E.WIREGUARD_SERVER_NOT_VALID, E.IP_NOT_IN_RANGE, E.PF_INCORRECT_PEER, E.PF_DST_IS_LISTEN_PORT,
  E.PF_NO_SUCH, E.FW_RULE_NOT_FOUND, E.BACKUP_NO_SUCH, OWN.PEERS_OUTSIDE_ADDRESS, OWN.NO_EXTERNAL_IP,
]);

/**
 * The HTTP status for an error text: 401 `Not authorized`; 404 not-found texts; 409 conflicts with the current
 * state; 422 well-formed values that do not fit the state; 500 for failures of the host (`...:` prefixes of
 * backup creation/restore); 400 for every other (validation) text.
 */
export function statusForText(text: string): number {
  if (text === E.NOT_AUTHORIZED) return 401;
  if (NOT_FOUND_TEXTS.has(text)) return 404;
  if (CONFLICT_TEXTS.has(text)) return 409;
  if (UNPROCESSABLE_TEXTS.has(text)) return 422;
  if (text.endsWith(':') && text !== E.BACKUP_READER) return 500;
  return 400;
}

/** `text` followed by its detail, for the spec's texts ending in a colon. */
export function withDetail(text: string, detail?: string): string {
  return detail ? `${text} ${detail}` : text;
}

/**
 * An error whose text is shown to the client in the envelope. Throw it from services and routes;
 * the error handler answers `{"error": message, "msg": "", "status": "error"}` with `httpStatus`.
 * `httpStatus` defaults to `statusForText(text)`; `detail` is appended to texts ending in a colon.
 */
export class ApiError extends Error {
  readonly httpStatus: number;
  constructor(readonly text: string, httpStatus?: number, detail?: string) {
    super(withDetail(text, detail));
    this.name = 'ApiError';
    this.httpStatus = httpStatus ?? statusForText(text);
  }
}

/** Whether `value` is an ApiError (also across module copies). */
export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError || (value instanceof Error && value.name === 'ApiError' && 'httpStatus' in value);
}
