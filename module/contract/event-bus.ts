// Typed in-process event bus: listeners run in registration order and a failing listener never breaks the emitter.

export type Listener<P> = (payload: P) => void | Promise<void>;

/** Called with every listener failure (thrown or rejected); must not throw itself. */
export type ListenerErrorHandler = (event: string, error: unknown) => void;

/**
 * A bus over an event map `{ 'event.name': PayloadType }`. `emit` awaits each listener in turn and resolves once
 * all have settled; listener errors go to the error handler. Listeners should be quick: queue heavy work with Task.add.
 */
export class EventBus<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<Listener<never>>>();
  readonly #onError: ListenerErrorHandler;
  /** Emits whose listeners have not all settled yet. */
  readonly #running = new Set<Promise<number>>();

  constructor(onError: ListenerErrorHandler = () => {}) {
    this.#onError = onError;
  }

  /** Adds a listener; returns a function that removes it. */
  on<E extends keyof Events & string>(event: E, listener: Listener<Events[E]>): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events & string>(event: E, listener: Listener<Events[E]>): void {
    this.#listeners.get(event)?.delete(listener as Listener<never>);
  }

  listenerCount(event: keyof Events & string): number {
    return this.#listeners.get(event)?.size ?? 0;
  }

  /** Runs every listener of `event`; resolves with the number of listeners that failed. */
  emit<E extends keyof Events & string>(event: E, payload: Events[E]): Promise<number> {
    const running = this.#run(event, payload);
    this.#running.add(running);
    void running.finally(() => this.#running.delete(running));
    return running;
  }

  /**
   * Resolves once no emit is running: the ones running now and any their listeners start meanwhile (e.g. a listener
   * that queues a task whose queueing emits again). A process stopping awaits it, so no listener is cut off half-way.
   */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async #run<E extends keyof Events & string>(event: E, payload: Events[E]): Promise<number> {
    let failed = 0;
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        await (listener as Listener<Events[E]>)(payload);
      } catch (error) {
        failed += 1;
        try {
          this.#onError(event, error);
        } catch {
          // the error handler itself must not break the emitter either
        }
      }
    }
    return failed;
  }
}
