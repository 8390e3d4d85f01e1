// Single-flight tracker of full reconciles: progress for the status text, last failure, and a wait-until-idle hook.

/** A full reconcile of the data plane from the store; reports progress as (done, total). */
export type ReconcileFn = (onProgress: (done: number, total: number) => void) => Promise<void>;

type State =
  | { kind: 'idle' }
  | { kind: 'running'; done: number; total: number }
  | { kind: 'failed'; message: string };

/** Thrown by `run` when a reconcile is already under way. */
export class ReconcileBusyError extends Error {
  constructor() {
    super('a reconcile is already running');
    this.name = 'ReconcileBusyError';
  }
}

/** Runs one reconcile at a time and describes the current one. */
export class ReconcilerStatus {
  private state: State = { kind: 'idle' };
  private current: Promise<void> | null = null;

  get running(): boolean {
    return this.state.kind === 'running';
  }

  /** `Loading (<done>/<total>)` while running, `Error: reconcile failed: <message>` after a failure, else null. */
  text(): string | null {
    if (this.state.kind === 'running') return `Loading (${this.state.done}/${this.state.total})`;
    if (this.state.kind === 'failed') return `Error: reconcile failed: ${this.state.message}`;
    return null;
  }

  /** Runs `fn` unless one is running (then throws ReconcileBusyError); records success or failure; rethrows. */
  run(fn: ReconcileFn): Promise<void> {
    if (this.current) return Promise.reject(new ReconcileBusyError());
    this.state = { kind: 'running', done: 0, total: 0 };
    const onProgress = (done: number, total: number) => {
      if (this.state.kind === 'running') this.state = { kind: 'running', done, total };
    };
    const promise = (async () => {
      await null; // let `current` be assigned before anything can finish
      try {
        await fn(onProgress);
        this.state = { kind: 'idle' };
      } catch (err) {
        this.state = { kind: 'failed', message: err instanceof Error ? err.message : String(err) };
        throw err;
      } finally {
        this.current = null;
      }
    })();
    this.current = promise.catch(() => undefined);
    return promise;
  }

  /** Resolves when no reconcile is running (never rejects). */
  async whenIdle(): Promise<void> {
    while (this.current) await this.current;
  }
}
