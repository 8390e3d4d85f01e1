// Listing entries kept as JSON bytes in one growing buffer, and listings sent from it in chunks (no string per listing).

/** A JSON text to send: its length in bytes and its bytes in chunks of at most {@link CHUNK} (copied when iterated). */
export interface JsonBody {
  readonly length: number;
  chunks(): Generator<Buffer>;
}

/** Bytes per chunk of a {@link JsonBody}. */
export const CHUNK = 64 * 1024;
const COMMA = 0x2c;

/**
 * The JSON fragment of each listed entry (an account's wire object, and its name as a JSON key), UTF-8 encoded back
 * to back in one buffer: `"<name>":{...}` per entry, the object starting at `mid`. A listing copies the fragments it
 * needs, in its order, into chunks of {@link CHUNK} bytes while it is sent, so neither the listing's text nor its
 * bytes ever exist whole (at 50,000 accounts that is 17 MB as a string, as many again as the envelope's string and
 * as its bytes, per request). Entries are only appended: a written-again entry leaves its old bytes unused until
 * the buffer is compacted into a new one, and a listing being sent keeps the buffer it started from, so what it sends
 * never changes underneath it.
 */
export class FragmentArena {
  private buf = Buffer.allocUnsafe(CHUNK);
  private used = 0;
  /** Bytes of entries dropped or written again, reclaimed by the next compaction. */
  private unused = 0;
  private readonly slotOf = new Map<number, number>();
  private start = new Int32Array(1024);
  private mid = new Int32Array(1024);
  private end = new Int32Array(1024);
  private readonly free: number[] = [];
  private slots = 0;

  /** Entries held. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Bytes of the buffer (held entries, unused bytes and room to grow). */
  get capacity(): number {
    return this.buf.length;
  }

  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  /** Keeps entry `id` as `key:json` (`key` a JSON string, `json` a JSON value), replacing what it held. */
  put(id: number, key: string, json: string): void {
    this.forget(id);
    const keyBytes = Buffer.byteLength(key) + 1;
    const bytes = keyBytes + Buffer.byteLength(json);
    this.reserve(bytes);
    const at = this.used;
    this.buf.write(key, at);
    this.buf[at + keyBytes - 1] = 0x3a; // ':'
    this.buf.write(json, at + keyBytes);
    this.used += bytes;
    const slot = this.free.pop() ?? this.slots++;
    if (slot >= this.start.length) this.growSlots();
    this.start[slot] = at;
    this.mid[slot] = at + keyBytes;
    this.end[slot] = at + bytes;
    this.slotOf.set(id, slot);
  }

  /** Drops entry `id` (nothing when absent). */
  forget(id: number): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.slotOf.delete(id);
    this.unused += this.end[slot] - this.start[slot];
    this.free.push(slot);
  }

  /** Drops every entry and gives the buffer back. */
  clear(): void {
    this.slotOf.clear();
    this.free.length = 0;
    this.slots = 0;
    this.buf = Buffer.allocUnsafe(CHUNK);
    this.used = 0;
    this.unused = 0;
  }

  /**
   * The listing of `ids` (each held; absent ones are left out) between `open` and `close`, comma-separated: the
   * entries' objects (`{...},{...}`), or with `keyed` their `"name":{...}` members. The offsets are taken now; the
   * bytes are copied as the chunks are read.
   */
  body(ids: readonly number[], keyed: boolean, open: string, close: string): JsonBody {
    const from = new Int32Array(ids.length);
    const to = new Int32Array(ids.length);
    let n = 0;
    let length = Buffer.byteLength(open) + Buffer.byteLength(close);
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      from[n] = keyed ? this.start[slot] : this.mid[slot];
      to[n] = this.end[slot];
      length += to[n] - from[n] + (n > 0 ? 1 : 0);
      n++;
    }
    const buf = this.buf;
    return {
      length,
      *chunks() {
        let out = Buffer.allocUnsafe(Math.min(CHUNK, length));
        let at = 0;
        /** Room for `bytes` more in `out`, yielding the filled part first when there is none. */
        function* room(bytes: number): Generator<Buffer> {
          if (at + bytes <= out.length) return;
          if (at > 0) yield out.subarray(0, at);
          out = Buffer.allocUnsafe(Math.max(CHUNK, bytes));
          at = 0;
        }
        const head = Buffer.from(open);
        yield* room(head.length);
        at += head.copy(out, at);
        for (let i = 0; i < n; i++) {
          const bytes = to[i] - from[i] + (i > 0 ? 1 : 0);
          if (at + bytes > out.length) yield* room(bytes);
          if (i > 0) out[at++] = COMMA;
          at += buf.copy(out, at, from[i], to[i]);
        }
        const tail = Buffer.from(close);
        yield* room(tail.length);
        at += tail.copy(out, at);
        if (at > 0) yield out.subarray(0, at);
      },
    };
  }

  /** Room for `bytes` more: the unused bytes reclaimed into a new buffer when they are half of it, else a larger one. */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buf.length) return;
    const live = this.used - this.unused;
    const next = Buffer.allocUnsafe(Math.max(CHUNK, Math.ceil((live + bytes) * 1.5)));
    let at = 0;
    for (const slot of this.slotOf.values()) {
      const length = this.end[slot] - this.start[slot];
      this.buf.copy(next, at, this.start[slot], this.end[slot]);
      this.mid[slot] = at + (this.mid[slot] - this.start[slot]);
      this.start[slot] = at;
      this.end[slot] = at + length;
      at += length;
    }
    this.buf = next;
    this.used = at;
    this.unused = 0;
  }

  private growSlots(): void {
    const grow = (column: Int32Array) => {
      const next = new Int32Array(column.length * 2);
      next.set(column);
      return next;
    };
    this.start = grow(this.start);
    this.mid = grow(this.mid);
    this.end = grow(this.end);
  }
}
