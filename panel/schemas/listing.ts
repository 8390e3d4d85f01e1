// Optional paging of the listings (GET /account, /wireguard/<name>/peers, /wireguard/online): an extension of the spec.
import { z } from 'zod';
import { OWN } from '../../shared/wire/error-texts.ts';

/** A non-negative decimal integer as a query value (`0`, `25`); anything else fails as `Bad request`. */
const count = z
  .string()
  .regex(/^(0|[1-9]\d{0,8})$/, { message: OWN.BAD_REQUEST })
  .transform(Number)
  .optional();

/**
 * `?limit=N&offset=M`: at most N entries after skipping M, in the listing's usual order. Both are optional; without
 * them the answer is the spec's full listing. Other query keys are ignored.
 */
export const ListingQuerySchema = z.object({ limit: count, offset: count });

/** A page of a listing; absent fields mean "no limit" and "from the start". */
export interface ListingPage {
  limit?: number;
  offset?: number;
}
