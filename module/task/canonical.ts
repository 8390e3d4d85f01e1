// Canonical JSON and the dedupe key of a task (job + queue + canonical input + sorted tags).
import { createHash, createHmac } from 'node:crypto';

/** JSON with object keys sorted at every depth; `undefined` members dropped as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value));
}

function sortDeep(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortDeep(item)));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value as Record<string, unknown>).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined && typeof member !== 'function') out[key] = sortDeep(member);
  }
  return out;
}

/** Tags as a set: trimmed, de-duplicated, sorted. */
export function normaliseTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag !== ''))].sort();
}

/**
 * Hex key identifying "the same task": job, queue, canonical input and the tag set. The input may hold secrets,
 * so with a `pepper` the key is an HMAC (a stored key then reveals nothing guessable about a password).
 */
export function dedupeKey(job: string, queue: string, input: unknown, tags: readonly string[], pepper?: Buffer): string {
  const material = canonicalJson({ job, queue, input, tags: normaliseTags(tags) });
  return pepper ? createHmac('sha256', pepper).update(material).digest('hex') : createHash('sha256').update(material).digest('hex');
}
