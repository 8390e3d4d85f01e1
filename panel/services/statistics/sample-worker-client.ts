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
  | { op: 'peerLeft'; accountId: number }
  | { op: 'accountsChanged' };

/** What a request answers. */
export type EngineValue = SampleOutcome | UnresolvedRead[] | null;

/** A request to the worker (`seq` pairs it with its reply; `accountsChanged` gets none). */
export type EngineRequest = EngineCall & { seq: number };

/** The worker's answer to one request. */
export type EngineReply = { seq: number; ok: true; value: EngineValue } | { seq: number; ok: false; message: string };

/** The engine's operations, wherever it runs. */
export interface EngineHandle {
  /**
   * Only in a worker: reads the WireGuard counters of `ifaces` there (see WorkerCounterReader) and holds them for the
   * next {@link sample}'s `held`; resolves to the interfaces it could not read.
   */
  read?(ifaces: string[]): Promise<UnresolvedRead[]>;
  /** One sample of `input` plus the counters the worker holds for `held` (worker only). */
  sample(input: SampleInput, held?: HeldReads): Promise<SampleOutcome>;
  peerLeft(accountId: number): Promise<void>;
  accountsChanged(): void;
  close(): Promise<void>;
}

/** The engine on the caller's thread (in-memory stores: a second connection would see another database). */
export function inThreadEngine(repo: TrafficStatisticsRepository, timeZone: string): EngineHandle {
  const engine = new SampleEngine(repo, timeZone);
  return {
    sample: async (input) => engine.sample(input),
    peerLeft: async (accountId) => engine.peerLeft(accountId),
    accountsChanged: () => engine.accountsChanged(),
    close: async () => undefined,
  };
}

/** Stops an idle worker after this long (it is started again, baselines reloaded from the store, when needed). */
const IDLE_MS = 15 * 60_000;
/**
 * Longest wait for one answer (a sample of 50,000 peers takes about a second; a worker's start compiles its
 * TypeScript first). A worker that does not answer in time is terminated and the request sent once more to a fresh
 * one, so a stuck worker can never hold the data-plane lane (account changes wait for their sample).
 */
export const REQUEST_TIMEOUT_MS = 60_000;

/**
 * The engine in a worker thread with its own connection to `file`, started at the first request and stopped after
 * {@link IDLE_MS} without one or on {@link close}; it keeps the process alive only while a request is pending. On the
 * linux data plane the worker reads the WireGuard counters itself ({@link EngineHandle.read}); counters the caller
 * read (the driver's) are copied to it once with the sample's input.
 */
export function workerEngine(file: string, timeZone: string, uapiDir?: string, timeoutMs = REQUEST_TIMEOUT_MS): EngineHandle {
  let worker: Worker | null = null;
  let seq = 0;
  let idle: NodeJS.Timeout | null = null;
  const pending = new Map<number, { resolve: (v: EngineValue) => void; reject: (e: Error) => void }>();
  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  const start = (): Worker => {
    const w = new Worker(new URL('./sample-worker.boot.mjs', import.meta.url), { workerData: { file, timeZone, uapiDir } });
    w.on('message', (reply: EngineReply) => {
      const p = pending.get(reply.seq);
      if (!p) return;
      pending.delete(reply.seq);
      if (pending.size === 0) w.unref();
      if (reply.ok) p.resolve(reply.value);
      else p.reject(new Error(reply.message));
    });
    w.on('error', (err) => failAll(err));
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      failAll(new Error(`traffic sample worker exited (${code})`));
    });
    // unref'd while idle (after the listeners: adding one refs the port again), ref'd while a request is pending
    w.unref();
    return w;
  };
  const once = (request: EngineCall): Promise<EngineValue> => {
    const w = (worker ??= start());
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => void worker?.terminate(), IDLE_MS);
    idle.unref();
    const message: EngineRequest = { ...request, seq: ++seq };
    return new Promise<EngineValue>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!pending.has(message.seq)) return;
        pending.delete(message.seq);
        reject(new WorkerTimeoutError(`traffic sample worker did not answer ${request.op} within ${timeoutMs} ms`));
        if (worker === w) worker = null;
        void w.terminate(); // its other pending requests fail through 'exit'
      }, timeoutMs);
      timer.unref();
      pending.set(message.seq, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      w.ref();
      w.postMessage(message);
    });
  };
  const call = (request: EngineCall): Promise<EngineValue> =>
    once(request).catch((err: unknown) => {
      if (err instanceof WorkerTimeoutError) return once(request); // one more try, on a fresh worker
      throw err;
    });
  return {
    read: async (ifaces) => (await call({ op: 'read', ifaces })) as UnresolvedRead[],
    sample: async (input, held = []) => (await call({ op: 'sample', input, held })) as SampleOutcome,
    peerLeft: async (accountId) => void (await call({ op: 'peerLeft', accountId })),
    accountsChanged: () => worker?.postMessage({ seq: 0, op: 'accountsChanged' } satisfies EngineRequest),
    close: async () => {
      if (idle) clearTimeout(idle);
      const w = worker;
      worker = null;
      await w?.terminate();
    },
  };
}

/** A worker that did not answer within the request timeout (it was terminated). */
export class WorkerTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerTimeoutError';
  }
}
