// Rows written together: every row added while the code runs on (before it awaits) — or, gathering a turn, until the event
// loop's next turn — and while the INSERT before is on its way goes in the next INSERT, so many writers at once cost one
// statement per round trip (or per turn) instead of one per row.

/** Rows waiting for the next INSERT, with the promise settled when they are stored. */
interface Batch<Row> {
  rows: Row[];
  stored: Promise<void>;
  settle: (error?: unknown) => void;
}

/**
 * When a batch is written: once the code that added its first row awaits (`now`: a reader right after sees it), or at
 * the event loop's next turn (`turn`: rows of every job running in between join it — on SQLite, where an INSERT never
 * waits, the only way several rows go together).
 */
export type BatchGathering = 'now' | 'turn';

/**
 * Batches rows for one table. `insert(rows)` writes up to `maxRows` rows in one statement. `add` resolves once its row's
 * batch is stored, or rejects with the batch's error. Batches are written one after the other, in the order their rows
 * were added.
 */
export class InsertBatcher<Row> {
  private next: Batch<Row> | null = null;
  private flushing: Promise<void> | null = null;

  constructor(private readonly insert: (rows: Row[]) => Promise<void>, private readonly maxRows = 200, private readonly gathering: BatchGathering = 'now') {}

  /** Adds `row` to the next batch: stored once the running code yields and the batch before is stored. */
  add(row: Row): Promise<void> {
    if (!this.next) {
      let settle!: Batch<Row>['settle'];
      const stored = new Promise<void>((resolve, reject) => (settle = (error) => (error === undefined ? resolve() : reject(error))));
      this.next = { rows: [], stored, settle };
      if (!this.flushing) this.flushing = (this.gathering === 'turn' ? new Promise<void>((resolve) => setImmediate(resolve)) : Promise.resolve()).then(() => this.flush());
    }
    this.next.rows.push(row);
    return this.next.stored;
  }

  /** Stores the waiting batches one after the other (at most `maxRows` rows per INSERT) until none is left. */
  private async flush(): Promise<void> {
    while (this.next) {
      const batch = this.next;
      this.next = null;
      try {
        for (let start = 0; start < batch.rows.length; start += this.maxRows) await this.insert(batch.rows.slice(start, start + this.maxRows));
        batch.settle();
      } catch (error) {
        batch.settle(error ?? new Error('batch insert failed'));
      }
    }
    this.flushing = null;
  }
}
