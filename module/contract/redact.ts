// Secret redaction for anything stored or logged by the platform: module logs, task inputs, error texts.

/** Key fragments that mark a value as secret (matched case-insensitively against the whole key). */
export const SECRET_KEY_PATTERN = /(pass(word)?|secret|token|api_?key|private_?key|access_?hash|^key$|_key$|authorization|cookie|license)/i;

export const REDACTED = '[redacted]';

/** Deep copy of `value` with every secret-named member replaced by `[redacted]`; cycles are cut. */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value as object)) return '[circular]' as unknown as T;
  seen.add(value as object);
  if (Array.isArray(value)) return value.map((item) => redact(item, seen)) as unknown as T;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEY_PATTERN.test(key) && member !== null && member !== '' ? REDACTED : redact(member, seen);
  }
  return out as T;
}

/** Replaces each known secret value occurring inside `text` (e.g. an error message echoing a password). */
export function redactText(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out;
}
