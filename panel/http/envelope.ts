// The response envelope every endpoint answers with: {"error": "", "msg": <result>, "status": "success"|"error"}.

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

/** The string most operations return in `msg`. */
export const SUCCESS = 'success';
