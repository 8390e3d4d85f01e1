// ModuleLogSink over the platform's worker API: a remote worker's module log entries, buffered and sent in batches.
import type { ModuleLogEntry, ModuleLogSink } from '../../contract/log.ts';
import type { TaskLogger } from '../../task/store-backed-queue.ts';
import type { WorkerApiClient } from './client.ts';

export interface RemoteModuleLogOptions {
  /** Send when this many entries wait, default 100 (the route takes at most 500 per request). */
  batch?: number;
  /** Send at least this often while entries wait, default 500 ms. */
  flushMs?: number;
  /** Entries kept while the platform cannot be reached; the oldest are dropped beyond it. Default 10,000. */
  maxBuffered?: number;
}

/**
 * Buffers scrubbed entries (logModule scrubs before `write`) and POSTs them to `/api/worker/module-logs`, so a job
 * never waits for its log line. Entries a failed send could not deliver stay buffered for the next send.
 */
export class RemoteModuleLogSink implements ModuleLogSink {
  private buffer: ModuleLogEntry[] = [];
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private dropped = 0;
  private closed = false;
  private readonly batch: number;
  private readonly flushMs: number;
  private readonly maxBuffered: number;

  constructor(private readonly api: WorkerApiClient, private readonly logger: TaskLogger, opts: RemoteModuleLogOptions = {}) {
    this.batch = Math.min(500, Math.max(1, opts.batch ?? 100));
    this.flushMs = opts.flushMs ?? 500;
    this.maxBuffered = opts.maxBuffered ?? 10_000;
  }

  write(entry: ModuleLogEntry): void {
    this.buffer.push(entry);
    this.trim();
    if (this.buffer.length >= this.batch) void this.flush();
    else this.arm(this.flushMs);
  }

  /** Sends what is buffered (one request at a time); resolves when the buffer was handed over or a send failed. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.sending) await this.sending;
    if (this.buffer.length === 0) return;
    this.sending = this.sendAll().finally(() => {
      this.sending = null;
    });
    await this.sending;
  }

  /** Flushes what is left (bounded by the client's timeouts); later writes are still sent on the next flush. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    if (this.buffer.length > 0) this.logger.error({ lost: this.buffer.length }, 'module log entries not delivered before the worker stopped');
  }

  private async sendAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const entries = this.buffer.splice(0, this.batch);
      try {
        await this.api.send204('POST', '/module-logs', { entries });
      } catch (error) {
        this.buffer.unshift(...entries);
        this.trim();
        this.logger.error({ err: error instanceof Error ? error.message : String(error), pending: this.buffer.length }, 'module log entries not delivered yet');
        this.arm(Math.max(this.flushMs, 2_000));
        return;
      }
      if (this.dropped > 0) {
        this.logger.error({ dropped: this.dropped }, 'module log entries dropped while the platform was unreachable');
        this.dropped = 0;
      }
    }
  }

  /** Drops the oldest entries beyond `maxBuffered`. */
  private trim(): void {
    const excess = this.buffer.length - this.maxBuffered;
    if (excess > 0) {
      this.buffer.splice(0, excess);
      this.dropped += excess;
    }
  }

  private arm(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }
}
