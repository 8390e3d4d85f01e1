// Undo steps of a failed data-plane change, and the subsystems whose undo failed (marked for reconcile).
import type { Logger } from 'pino';

/** A data-plane subsystem the sync writes (the first part of a {@link UndoLedger.marked} entry). */
export type SyncSubsystem = 'wireguard' | 'firewall' | 'shaping';

/** One step undone after a failed change: the subsystem and interface it writes, and the inverse write. */
export interface UndoStep {
  subsystem: SyncSubsystem;
  iface: string;
  run(): Promise<void>;
}

/**
 * Runs undo steps and remembers those that failed. A failed undo is logged (error: subsystem, interface, cause),
 * never thrown (the change's own error is the one the caller answers), and marks `subsystem:interface` for reconcile
 * until a full reconcile {@link settle}s it; `onMarked` lets the owner forget what it believed set up.
 */
export class UndoLedger {
  private readonly dirty = new Set<string>();

  constructor(private readonly onMarked: (step: UndoStep) => unknown, private readonly logger?: Logger) {}

  /** Runs `step`; on failure logs it and marks its subsystem and interface. */
  async run(step: UndoStep): Promise<void> {
    try {
      await step.run();
    } catch (err) {
      this.dirty.add(`${step.subsystem}:${step.iface}`);
      this.onMarked(step);
      this.logger?.error(
        { subsystem: step.subsystem, iface: step.iface, err: (err as Error)?.message ?? String(err) },
        'undo of a failed data-plane change failed; the subsystem is marked for reconcile',
      );
    }
  }

  /** The marked `subsystem:interface` entries, sorted. */
  marked(): string[] {
    return [...this.dirty].sort();
  }

  /** Runs a full reconcile: the entries marked before it started are cleared once it succeeded. */
  async settle<T>(reconcile: () => Promise<T>): Promise<T> {
    const before = new Set(this.dirty);
    const out = await reconcile();
    for (const entry of before) this.dirty.delete(entry);
    return out;
  }
}
