// Sends records to one sink in batches from a bounded backlog; a failing sink backs off and resumes by itself.
import { Backlog } from './backlog.ts';

/** Where a batch goes (syslog over UDP, the TSDB's write API). `send` rejects when the batch was not delivered. */
export interface BatchSink<T> {
  readonly name: string;
  send(batch: T[]): Promise<void>;
  close(): Promise<void>;
}

/** Tuning of a {@link Shipper}. */
export interface ShipperOptions {
  /** Most records waiting (default 10,000); beyond it the oldest are dropped and counted. */
  cap?: number;
  /** Records per send (default 500). */
  batchSize?: number;
  /** First retry delay after a failed send (default 250 ms), doubled up to `maxRetryMs` (default 10 s). */
  minRetryMs?: number;
  maxRetryMs?: number;
  /** Called once per failed send (logging); never with record contents. */
  onError?: (sink: string, err: unknown) => void;
}

/** Counters of one shipper. */
export interface ShipperStats {
  sink: string;
  backlog: number;
  dropped: number;
  sent: number;
  failures: number;
}

/**
 * Batches records to a sink without ever blocking the caller: `push` only appends to the backlog; one send runs
 * at a time; a failed batch goes back in front and the next try waits (exponential backoff), so a receiver that is
 * down costs the API nothing and sending resumes once it answers again.
 */
export class Shipper<T> {
  private readonly backlog: Backlog<T>;
  private readonly batchSize: number;
  private readonly minRetryMs: number;
  private readonly maxRetryMs: number;
  private sending: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private delay = 0;
  private closed = false;
  private sent = 0;
  private failures = 0;

  constructor(private readonly sink: BatchSink<T>, private readonly opts: ShipperOptions = {}) {
    this.backlog = new Backlog<T>(opts.cap ?? 10_000);
    this.batchSize = opts.batchSize ?? 500;
    this.minRetryMs = opts.minRetryMs ?? 250;
    this.maxRetryMs = opts.maxRetryMs ?? 10_000;
  }

  push(item: T): void {
    if (this.closed) return;
    this.backlog.push(item);
    this.kick();
  }

  stats(): ShipperStats {
    return { sink: this.sink.name, backlog: this.backlog.size, dropped: this.backlog.dropped, sent: this.sent, failures: this.failures };
  }

  /** Starts a send when none runs and no retry is pending (next tick, so pushes of one burst share a batch). */
  private kick(): void {
    if (this.sending || this.retryTimer || this.closed || this.backlog.size === 0) return;
    this.sending = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (!this.closed && this.backlog.size > 0) {
        const batch = this.backlog.take(this.batchSize);
        try {
          await this.sink.send(batch);
          this.sent += batch.length;
          this.delay = 0;
        } catch (err) {
          this.failures++;
          this.backlog.putBack(batch);
          this.opts.onError?.(this.sink.name, err);
          this.delay = Math.min(this.maxRetryMs, this.delay ? this.delay * 2 : this.minRetryMs);
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.kick();
          }, this.delay);
          this.retryTimer.unref();
          return;
        }
      }
    } finally {
      this.sending = null;
    }
  }

  /** Tries what is waiting once more (bounded by `graceMs`), then stops and closes the sink. */
  async close(graceMs = 1_000): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const pending = this.sending ?? Promise.resolve();
    await Promise.race([pending, new Promise((r) => setTimeout(r, graceMs).unref())]);
    this.closed = true;
    await this.sink.close().catch(() => undefined);
  }
}
