// Splits large sets into chunks (100 items by default, the spec's guidance) for batched processing.

const DEFAULT_CHUNK_SIZE = 100;

export function chunk<T>(items: readonly T[], size = DEFAULT_CHUNK_SIZE): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
