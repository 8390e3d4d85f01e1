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

/** Either envelope; discriminate on `status`. */
export function envelopeSchema<T extends z.ZodType>(msg: T) {
  return z.discriminatedUnion('status', [successEnvelopeSchema(msg), errorEnvelopeSchema]);
}

/** `msg` of operations that answer the string `success`. */
export const successStringSchema = z.literal('success');

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
