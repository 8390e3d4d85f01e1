// The in-memory twin of the kernel source of logged packets (tests, the simulated data plane).
import type { FlowEvent } from '../flow-event.ts';
import { DEFAULT_NFLOG, type FlowSource, type FlowSourceState, type FlowSubscription } from '../flow-source.ts';

/**
 * In-memory twin: tests and the simulated data plane push events by hand; `installed` toggles availability, `down`
 * (a failure text) makes it report a dead daemon.
 */
export class SimulatedFlowSource implements FlowSource {
  readonly nflog = { ...DEFAULT_NFLOG };
  installed = true;
  down: string | null = null;
  private readonly listeners = new Set<(event: FlowEvent) => void>();

  async available(): Promise<boolean> {
    return this.installed;
  }

  start(onEvent: (event: FlowEvent) => void): FlowSubscription {
    this.listeners.add(onEvent);
    return { stop: async () => void this.listeners.delete(onEvent) };
  }

  state(): FlowSourceState {
    return { pid: this.listeners.size > 0 && !this.down ? 0 : null, restarts: this.down ? 1 : 0, lastError: this.down };
  }

  /** Delivers `event` to every running subscription. */
  emit(event: FlowEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Number of running subscriptions. */
  get subscribers(): number {
    return this.listeners.size;
  }
}
