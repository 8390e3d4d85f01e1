// Zod schemas of the response envelope, shared by the panel and the module's typed client.
import { z } from 'zod';

/** The failed envelope: `{"error":"<text>","msg":"","status":"error"}`. */
export const errorEnvelopeSchema = z.object({
  error: z.string().min(1),
  msg: z.literal(''),
  status: z.literal('error'),
});

/** The successful envelope around `msg`. */
export function successEnvelopeSchema<T extends z.ZodType>(msg: T) {
  return z.object({ error: z.literal(''), msg, status: z.literal('success') });
}

/** Either envelope around `msg`. */
function buildEnvelopeSchema<T extends z.ZodType>(msg: T) {
  return z.discriminatedUnion('status', [successEnvelopeSchema(msg), errorEnvelopeSchema]);
}

/** Envelope schemas built so far, by `msg` schema (building one, and its first parse, cost far more than a parse). */
const envelopes = new WeakMap<z.ZodType, ReturnType<typeof buildEnvelopeSchema>>();

/** Either envelope; discriminate on `status`. One schema per `msg` schema, built on first use. */
export function envelopeSchema<T extends z.ZodType>(msg: T): ReturnType<typeof buildEnvelopeSchema<T>> {
  let schema = envelopes.get(msg);
  if (!schema) envelopes.set(msg, (schema = buildEnvelopeSchema(msg)));
  return schema as ReturnType<typeof buildEnvelopeSchema<T>>;
}

/** `msg` of operations that answer the string `success`. */
export const successStringSchema = z.literal('success');

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
