// The response envelope every endpoint answers with: {"error": "", "msg": <result>, "status": "success"|"error"}.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** A successful envelope carrying `msg`. */
export interface SuccessEnvelope<T> {
  error: '';
  msg: T;
  status: 'success';
}

/** A failed envelope carrying the error text. */
export interface ErrorEnvelope {
  error: string;
  msg: '';
  status: 'error';
}

/** `{"error":"","msg":<msg>,"status":"success"}` */
export function ok<T>(msg: T): SuccessEnvelope<T> {
  return { error: '', msg, status: 'success' };
}

/** `{"error":"<text>","msg":"","status":"error"}` */
export function fail(text: string): ErrorEnvelope {
  return { error: text, msg: '', status: 'error' };
}

/** What a success envelope holds before and after its `msg`. */
export const ENVELOPE_OPEN = '{"error":"","msg":';
export const ENVELOPE_CLOSE = ',"status":"success"}';

/**
 * Sends a success envelope already made as JSON bytes (a listing copied from kept fragments, wrapped in
 * {@link ENVELOPE_OPEN} and {@link ENVELOPE_CLOSE}), byte for byte what `ok(JSON.parse(msg))` serialises to, with its
 * Content-Length, streamed chunk by chunk: the whole answer is never one string or one buffer.
 */
export function sendJsonBody(reply: FastifyReply, body: { length: number; chunks(): Iterable<Buffer> }): FastifyReply {
  return reply.type('application/json; charset=utf-8').header('content-length', body.length).send(Readable.from(body.chunks(), { objectMode: false }));
}

/** The string most operations return in `msg`. */
export const SUCCESS = 'success' as const;
