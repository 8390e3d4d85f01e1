// Runs the sample engine in a worker thread (its SQLite write never blocks the API) or, for an in-memory store, in place.
import { Worker } from 'node:worker_threads';
import type { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { SampleEngine, type SampleInput, type SampleOutcome } from './sample-engine.ts';
import type { UnresolvedRead } from './worker-counters.ts';

/** Interfaces whose counters the worker read itself and holds for the next sample: [server id, interface]. */
export type HeldReads = Array<[serverId: number, iface: string]>;

/** A request without its sequence number. */
export type EngineCall =
  | { op: 'read'; ifaces: string[] }
  | { op: 'sample'; input: SampleInput; held: HeldReads }
  | { op: 'peerLeft'; accountIds: number[] }
  | { op: 'accountsChanged' };

/** What a request answers. */
export type EngineValue = SampleOutcome | UnresolvedRead[] | null;

/** A request to the worker (`seq` pairs it with its reply; `accountsChanged` gets none). */
export type EngineRequest = EngineCall & { seq: number };

/**
 * The worker's messages: `ready` once, when it listens (its module graph loaded, its connection open), then one reply
 * per request.
 */
export type EngineReply =
  | { ready: true }
  | { seq: number; ok: true; value: EngineValue }
  | { seq: number; ok: false; message: string };

/** The engine's operations, wherever it runs. */
export interface EngineHandle {
  /**
   * Only in a worker: reads the WireGuard counters of `ifaces` there (see WorkerCounterReader) and holds them for the
   * next {@link sample}'s `held`; resolves to the interfaces it could not read.
   */
  read?(ifaces: string[]): Promise<UnresolvedRead[]>;
  /** One sample of `input` plus the counters the worker holds for `held` (worker only). */
  sample(input: SampleInput, held?: HeldReads): Promise<SampleOutcome>;
  /** These accounts' peers left their interfaces: their baselines are dropped (see SampleEngine.peerLeft). */
  peerLeft(accountIds: number[]): Promise<void>;
  accountsChanged(): void;
  close(): Promise<void>;
}

/** The engine on the caller's thread (in-memory stores: a second connection would see another database). */
export function inThreadEngine(repo: TrafficStatisticsRepository, timeZone: string): EngineHandle {
  const engine = new SampleEngine(repo, timeZone);
  return {
    sample: async (input) => engine.sample(input),
    peerLeft: async (accountIds) => engine.peerLeft(accountIds),
    accountsChanged: () => engine.accountsChanged(),
    close: async () => undefined,
  };
}

/** Stops an idle worker after this long (it is started again, baselines reloaded from the store, when needed). */
const IDLE_MS = 15 * 60_000;
/**
 * Longest wait for a started worker to say it listens. Loading its module graph (TypeScript through tsx's hooks)
 * took 0.3 s on an idle 2-core machine and 5-7 s, once over 20 s, under a load average of 15.
 */
const START_TIMEOUT_MS = 30_000;
/** Longest wait for one answer (a sample of 50,000 peers takes about a second). */
const REQUEST_TIMEOUT_MS = 60_000;
/** Longest wait for a terminated worker's thread to end (it only fails to when stuck in native code). */
const EXIT_WAIT_MS = 5_000;

/** Options of {@link workerEngine}. */
export interface WorkerEngineOptions {
  /** Directory of wireguard-go's UAPI sockets the worker reads (default `/var/run/wireguard`). */
  uapiDir?: string;
  /** See {@link START_TIMEOUT_MS}. */
  startTimeoutMs?: number;
  /** See {@link REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** The worker's entry (tests start a worker that stalls or dies); default `sample-worker.boot.mjs`. */
  entry?: URL;
  /**
   * For the sampler: how long after a failure its samples skip the worker and run on the caller's thread (default 15
   * minutes; a stuck worker would otherwise hold every sample up to its deadlines).
   */
  restMs?: number;
}

/** The sample worker failed a request: it did not start, did not answer in time, exited or threw. It is gone. */
export class SampleWorkerError extends Error {
  constructor(message: string, readonly reason: 'start' | 'timeout' | 'exit' | 'error') {
    super(message);
    this.name = 'SampleWorkerError';
  }
}

/** One started worker and the requests it owes an answer. */
interface Slot {
  worker: Worker;
  ready: boolean;
  pending: Map<number, { resolve: (v: EngineValue) => void; reject: (e: Error) => void }>;
  /** Starts the answer deadlines of requests posted before the worker said it listens. */
  armOnReady: Array<() => void>;
  /** Settles when the thread has ended. */
  exited: Promise<void>;
  /** Set once the slot failed or was retired; later events of its worker change nothing. */
  over: boolean;
  startTimer: NodeJS.Timeout | null;
}

/**
 * The engine in a worker thread with its own connection to `file`, started at the first request and stopped after
 * {@link IDLE_MS} without one or on {@link close}; it keeps the process alive only while a request is pending. On the
 * linux data plane the worker reads the WireGuard counters itself ({@link EngineHandle.read}); counters the caller
 * read (the driver's) are copied to it once with the sample's input.
 *
 * A worker that does not say it listens within {@link START_TIMEOUT_MS}, does not answer a request within
 * {@link REQUEST_TIMEOUT_MS}, exits or throws is terminated, and every request it owed fails with a
 * {@link SampleWorkerError} only once its thread has ended (or {@link EXIT_WAIT_MS} later): the caller can then take
 * the sample another way without a second engine writing at the same time (the store refuses a write over baselines
 * that changed since they were read, see TrafficStatisticsRepository.write). The next request starts a fresh worker.
 * Each worker's requests are its own: a worker's end never fails another's.
 */
export function workerEngine(file: string, timeZone: string, opts: WorkerEngineOptions = {}): EngineHandle {
  const timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const startTimeoutMs = opts.startTimeoutMs ?? START_TIMEOUT_MS;
  const entry = opts.entry ?? new URL('./sample-worker.boot.mjs', import.meta.url);
  let current: Slot | null = null;
  let seq = 0;
  let idle: NodeJS.Timeout | null = null;

  /** Ends `slot`'s worker; its pending requests fail with `err` once the thread is gone. */
  const fail = (slot: Slot, err: SampleWorkerError): void => {
    if (slot.over) return;
    slot.over = true;
    if (current === slot) current = null;
    if (slot.startTimer) clearTimeout(slot.startTimer);
    const owed = [...slot.pending.values()];
    slot.pending.clear();
    void slot.worker.terminate();
    const gone = new Promise<void>((resolve) => setTimeout(resolve, EXIT_WAIT_MS).unref());
    void Promise.race([slot.exited, gone]).then(() => {
      for (const p of owed) p.reject(err);
    });
  };

  const start = (): Slot => {
    const worker = new Worker(entry, { workerData: { file, timeZone, uapiDir: opts.uapiDir } });
    const slot: Slot = { worker, ready: false, pending: new Map(), armOnReady: [], exited: Promise.resolve(), over: false, startTimer: null };
    slot.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: EngineReply) => {
      if ('ready' in reply) {
        slot.ready = true;
        if (slot.startTimer) clearTimeout(slot.startTimer);
        slot.startTimer = null;
        for (const arm of slot.armOnReady.splice(0)) arm();
        return;
      }
      const p = slot.pending.get(reply.seq);
      if (!p) return;
      slot.pending.delete(reply.seq);
      if (slot.pending.size === 0) worker.unref();
      if (reply.ok) p.resolve(reply.value);
      else p.reject(new Error(reply.message));
    });
    worker.on('error', (err) => fail(slot, new SampleWorkerError(`traffic sample worker failed: ${err.message}`, 'error')));
    worker.on('exit', (code) => fail(slot, new SampleWorkerError(`traffic sample worker exited (${code})`, 'exit')));
    slot.startTimer = setTimeout(() => {
      fail(slot, new SampleWorkerError(`traffic sample worker did not start within ${startTimeoutMs} ms`, 'start'));
    }, startTimeoutMs);
    slot.startTimer.unref();
    // unref'd while idle (after the listeners: adding one refs the port again), ref'd while a request is pending
    worker.unref();
    return slot;
  };

  /** Stops the current worker (nothing pending: it is idle, or the engine closes). */
  const retire = (): Promise<void> => {
    const slot = current;
    current = null;
    if (!slot) return Promise.resolve();
    slot.over = true;
    if (slot.startTimer) clearTimeout(slot.startTimer);
    return slot.worker.terminate().then(() => undefined);
  };

  /**
   * Account writes come in bursts (a group commit writes dozens of rows): the worker is told once per turn of the
   * event loop, and always before any request posted after the write, so a sample never sees a stale key index.
   */
  let changeOwed = false;
  const tellChange = (): void => {
    if (!changeOwed) return;
    changeOwed = false;
    current?.worker.postMessage({ seq: 0, op: 'accountsChanged' } satisfies EngineRequest);
  };

  const call = (request: EngineCall): Promise<EngineValue> => {
    tellChange();
    const slot = (current ??= start());
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => void retire(), IDLE_MS);
    idle.unref();
    const message: EngineRequest = { ...request, seq: ++seq };
    return new Promise<EngineValue>((resolve, reject) => {
      // the wait for an answer begins once the worker listens (its start has a deadline of its own)
      let timer: NodeJS.Timeout | null = null;
      const arm = () => {
        if (!slot.pending.has(message.seq)) return;
        timer = setTimeout(() => {
          if (slot.pending.has(message.seq)) {
            fail(slot, new SampleWorkerError(`traffic sample worker did not answer ${request.op} within ${timeoutMs} ms`, 'timeout'));
          }
        }, timeoutMs);
        timer.unref();
      };
      const disarm = () => timer && clearTimeout(timer);
      slot.pending.set(message.seq, {
        resolve: (v) => (disarm(), resolve(v)),
        reject: (e) => (disarm(), reject(e)),
      });
      if (slot.ready) arm();
      else slot.armOnReady.push(arm);
      slot.worker.ref();
      slot.worker.postMessage(message);
    });
  };

  return {
    read: async (ifaces) => (await call({ op: 'read', ifaces })) as UnresolvedRead[],
    sample: async (input, held = []) => (await call({ op: 'sample', input, held })) as SampleOutcome,
    peerLeft: async (accountIds) => void (await call({ op: 'peerLeft', accountIds })),
    accountsChanged: () => {
      if (changeOwed) return;
      changeOwed = true;
      setImmediate(tellChange);
    },
    close: async () => {
      if (idle) clearTimeout(idle);
      await retire();
    },
  };
}
