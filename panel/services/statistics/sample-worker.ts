// Worker-thread entry of the sample engine: its own SQLite connection to the panel's file, messages from the sampler.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { SampleEngine } from './sample-engine.ts';
import type { EngineReply, EngineRequest } from './sample-worker-client.ts';

const { file, timeZone } = workerData as { file: string; timeZone: string };
const db = new Database(file, { fileMustExist: true });
// the panel's connection settings (db.ts); the schema and WAL mode are the panel's, already in place
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
const engine = new SampleEngine(new TrafficStatisticsRepository(db), timeZone);

parentPort!.on('message', (request: EngineRequest) => {
  let reply: EngineReply;
  try {
    if (request.op === 'accountsChanged') {
      engine.accountsChanged();
      return;
    }
    const value = request.op === 'sample' ? engine.sample(request.input) : (engine.peerLeft(request.accountId), null);
    reply = { seq: request.seq, ok: true, value };
  } catch (err) {
    reply = { seq: request.seq, ok: false, message: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
