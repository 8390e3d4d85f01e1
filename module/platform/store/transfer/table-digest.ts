// A content digest of a table that both engines compute alike: each row serialised canonically (columns by name,
// integers and reals as JavaScript numbers, text as is, blobs as hex), hashed, the row hashes sorted and hashed again —
// so the digest depends on the rows, never on the order an engine returns them in or on its collation.
import { createHash } from 'node:crypto';

/** One value in canonical form. */
function canonical(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return { hex: value.toString('hex') };
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** Accumulates rows; `digest()` is the SHA-256 hex of the table. */
export class TableDigest {
  private readonly rowHashes: string[] = [];

  add(row: Record<string, unknown>): void {
    const text = JSON.stringify(Object.keys(row).sort().map((column) => [column, canonical(row[column])]));
    this.rowHashes.push(createHash('sha256').update(text).digest('hex'));
  }

  get rows(): number {
    return this.rowHashes.length;
  }

  digest(): string {
    const hash = createHash('sha256');
    for (const rowHash of [...this.rowHashes].sort()) hash.update(rowHash);
    return hash.digest('hex');
  }
}
