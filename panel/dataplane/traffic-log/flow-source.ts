// The kernel source of logged packets: its contract (linux/ulogd-source.ts reads NFLOG through ulogd2; simulated/ is the twin).
import type { FlowEvent } from './flow-event.ts';

/** A running subscription; `stop` ends it. */
export interface FlowSubscription {
  stop(): Promise<void>;
}

/** How the source's daemon is doing (`pid` null: down), for stats and logs. */
export interface FlowSourceState {
  /** pid of the running daemon, null while it is down (between a death and its restart). */
  pid: number | null;
  /** Restarts after the daemon died on its own since `start`. */
  restarts: number;
  /** Why it last died (its last log line or its exit), null when it never did. */
  lastError: string | null;
}

/**
 * Where logged packets come from. `available()` tells whether the tool exists (`TSDB agent not installed`
 * otherwise); `start` delivers events until stopped and restarts a daemon that died, reporting it via `onError`.
 * `nflog` names the NFLOG group and batch size the kernel rules must use to reach it.
 */
export interface FlowSource {
  readonly nflog: { group: number; threshold: number };
  available(): Promise<boolean>;
  start(onEvent: (event: FlowEvent) => void, onError: (err: unknown) => void): FlowSubscription;
  state(): FlowSourceState;
}

/** Default NFLOG group of the panel's rules and how many packets the kernel batches per hand-over. */
export const DEFAULT_NFLOG = { group: 4747, threshold: 16 } as const;
