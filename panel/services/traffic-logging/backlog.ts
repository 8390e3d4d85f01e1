// A bounded FIFO of records waiting to be sent: past its cap the oldest are dropped and counted.

/** Bounded FIFO; `dropped` counts every record pushed out to keep within `cap`. */
export class Backlog<T> {
  private items: T[] = [];
  private head = 0;
  /** Records dropped (oldest first) to stay within the cap, since creation. */
  dropped = 0;

  constructor(readonly cap: number) {
    if (!Number.isInteger(cap) || cap < 1) throw new Error('backlog cap must be a positive integer');
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /** Appends `item`, dropping the oldest when over the cap. */
  push(item: T): void {
    this.items.push(item);
    this.trim();
  }

  /** Removes and returns up to `n` of the oldest records. */
  take(n: number): T[] {
    const out = this.items.slice(this.head, this.head + n);
    this.head += out.length;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Puts a batch that could not be sent back in front (it is the oldest); trims to the cap from the front. */
  putBack(batch: T[]): void {
    this.items = [...batch, ...this.items.slice(this.head)];
    this.head = 0;
    this.trim();
  }

  private trim(): void {
    const over = this.size - this.cap;
    if (over > 0) {
      this.head += over;
      this.dropped += over;
    }
  }
}
