// The response envelope every endpoint answers with: {"error": "", "msg": <result>, "status": "success"|"error"}.
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

/**
 * Sends a success envelope whose `msg` is already JSON text (the listings build theirs from kept fragments), byte
 * for byte what `ok(JSON.parse(json))` serialises to, without parsing or serialising it again.
 */
export function sendJsonEnvelope(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(`{"error":"","msg":${json},"status":"success"}`);
}

/** The string most operations return in `msg`. */
export const SUCCESS = 'success';
