// The bench's HTTP load client in a process of its own (autocannon), so the server under test does not share its thread
// with the client that loads it: the parent sends one run at a time over IPC and gets the figures back.
// Used by back-office.ts through `LoadClient`; run as a child (`fork`), never on its own.
import { fork, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';

/** One request autocannon cycles through on every connection. */
export interface LoadRequest {
  method: 'GET';
  path: string;
  headers: Record<string, string>;
}

/** What the parent asks for: `seconds` of load on `url` over `connections`, cycling `requests`. */
interface RunOrder {
  url: string;
  connections: number;
  seconds: number;
  requests: LoadRequest[];
}

/** What one run measured (autocannon's figures, and the client's own CPU time). */
export interface LoadResult {
  /** Requests per second (average over the run) and answered in all. */
  rps: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU time (user + system, µs) the client process spent on the run. */
  clientCpuUs: number;
}

/** The parent's handle on the client process: one run at a time. */
export class LoadClient {
  private constructor(private readonly child: ChildProcess) {}

  /** Starts the client process (this file, under the same loader flags as the parent). */
  static async start(): Promise<LoadClient> {
    const child = fork(new URL(import.meta.url).pathname, ['--child'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`load client exited with ${code} before it was ready`)));
    });
    return new LoadClient(child);
  }

  /** Runs `order` in the client process and answers what it measured. */
  run(order: RunOrder): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load client exited with ${code} during a run`));
      this.child.once('exit', onExit);
      this.child.once('message', (result) => {
        this.child.off('exit', onExit);
        resolve(result as LoadResult);
      });
      this.child.send(order);
    });
  }

  /** Ends the client process. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

/** The child's side: answer each order with its run's figures until the parent disconnects. */
async function serve(): Promise<void> {
  process.on('message', (message) => {
    const order = message as RunOrder;
    const cpu = process.cpuUsage();
    void autocannon({ url: order.url, connections: order.connections, duration: order.seconds, requests: order.requests }).then((result) => {
      const used = process.cpuUsage(cpu);
      const answer: LoadResult = {
        rps: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99,
        errors: result.errors, non2xx: result.non2xx, clientCpuUs: used.user + used.system,
      };
      process.send!(answer);
    });
  });
  process.send!('ready');
}

if (process.argv.includes('--child')) await serve();
