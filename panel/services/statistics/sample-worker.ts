// Worker-thread entry of the sample engine: its own SQLite connection to the panel's file, its own counter reads, messages from the sampler.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { SampleEngine } from './sample-engine.ts';
import type { EngineReply, EngineRequest, EngineValue } from './sample-worker-client.ts';
import { WorkerCounterReader } from './worker-counters.ts';

const { file, timeZone, uapiDir } = workerData as { file: string; timeZone: string; uapiDir?: string };
lowerThisThreadsPriority();
const db = new Database(file, { fileMustExist: true });
// the panel's connection settings (db.ts); the schema and WAL mode are the panel's, already in place
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
const engine = new SampleEngine(new TrafficStatisticsRepository(db), timeZone);

const counters = new WorkerCounterReader(uapiDir);

/** Runs one request; the sample takes the counters this worker read for `held` (the driver's came with the input). */
async function handle(request: Exclude<EngineRequest, { op: 'accountsChanged' }>): Promise<EngineValue> {
  if (request.op === 'read') return counters.read(request.ifaces);
  if (request.op === 'peerLeft') {
    engine.peerLeft(request.accountIds);
    return null;
  }
  const { input, held } = request;
  for (const [serverId, iface] of held) {
    const read = counters.take(iface);
    if (read) input.dumps.push([serverId, iface, read]);
  }
  return engine.sample(input);
}

parentPort!.on('message', (request: EngineRequest) => {
  if (request.op === 'accountsChanged') {
    engine.accountsChanged();
    return;
  }
  void handle(request).then(
    (value): EngineReply => ({ seq: request.seq, ok: true, value }),
    (err: unknown): EngineReply => ({ seq: request.seq, ok: false, message: (err as Error).message }),
  ).then((reply) => parentPort!.postMessage(reply));
});
// the module graph is loaded and the connection open: the client's start deadline ends here
parentPort!.postMessage({ ready: true } satisfies EngineReply);

/**
 * Linux gives each thread its own nice value (setpriority on a thread id): this thread, and the `wg` it spawns, run
 * 10 steps below the panel's, so on a busy host a sample yields the CPU to API requests. Elsewhere: left as it is.
 */
function lowerThisThreadsPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(tid, Math.min(19, getPriority(tid) + 10));
  } catch {
    // no /proc/thread-self (not Linux) or not allowed: the sample runs at the panel's priority
  }
}
