// The one conversion of a data-plane subsystem's refusal into the API error it answers (statuses: panel/http/errors.ts).
import { FirewallError } from '../dataplane/firewall/firewall.ts';
import { ShapingError } from '../dataplane/shaping/shaping.ts';
import { ApiError } from '../http/errors.ts';

/**
 * A subsystem refusal as an `ApiError` with the subsystem's text: a `FirewallError` keeps its text (a seed text or
 * one of `FIREWALL_TEXTS`); a shaper refusal keeps its `shaping: ...` text. The status comes from the catalogue, so
 * the same text answers the same status through every route. Anything else (a failed tool run such as `tc: ...`)
 * passes unchanged and is answered as unexpected (500, logged).
 */
export function dataplaneRefusal(err: unknown): unknown {
  if (err instanceof FirewallError || (err instanceof Error && err.name === 'FirewallError' && 'text' in err)) {
    return new ApiError((err as FirewallError).text);
  }
  if (err instanceof ShapingError && err.message.startsWith('shaping:')) return new ApiError(err.message);
  return err;
}
