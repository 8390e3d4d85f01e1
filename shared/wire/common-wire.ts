// Wire building blocks of the WireGuard/account schemas (zod only); envelopes live in ./envelope.ts.
import { z } from 'zod';

/** One request parameter as it arrives: a form value (string) or a JSON scalar. */
export const FormScalarSchema = z.union([z.string(), z.number(), z.boolean()]);
export type FormScalar = z.infer<typeof FormScalarSchema>;

/** A text parameter as it arrives: a form value or a JSON string or number (a JSON boolean is no text). */
export const TextScalarSchema = z.union([z.string(), z.number()]);
export type TextScalar = z.infer<typeof TextScalarSchema>;

/** An optional flag or integer parameter (flags take JSON booleans too). */
export const optionalParam = FormScalarSchema.optional();

/** An optional text parameter (names, addresses, keys, passwords); a JSON boolean or null fails as `Bad request`. */
export const textParam = TextScalarSchema.optional();

/** Names and usernames: letters, digits, `_`, `-`. */
export const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/** WireGuard interface names the panel accepts: `wg` followed by a number, at most 15 characters. */
export const INTERFACE_PATTERN = /^wg\d{1,13}$/;

/** Path parameter `<name>` of a server or account. */
export const NameParamsSchema = z.object({ name: z.string() });
