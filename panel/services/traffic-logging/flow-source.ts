// The kernel source of connection events: its contract, the conntrack implementation and an in-memory twin.
import { execa, type ResultPromise } from 'execa';
import { createInterface } from 'node:readline';
import type { CommandRunner } from '../../dataplane/linux/runner.ts';
import { parseConntrackLine } from './conntrack-parser.ts';
import type { FlowEvent } from './flow-event.ts';

/** A running subscription; `stop` ends it. */
export interface FlowSubscription {
  stop(): Promise<void>;
}

/**
 * Where connection events come from. `available()` tells whether the tool exists (`TSDB agent not installed`
 * otherwise); `start` delivers events until stopped and restarts a source that died, reporting it via `onError`.
 */
export interface FlowSource {
  available(): Promise<boolean>;
  start(onEvent: (event: FlowEvent) => void, onError: (err: unknown) => void): FlowSubscription;
}

/** Options of {@link ConntrackSource}. */
export interface ConntrackSourceOptions {
  /** Listen inside this network namespace (`ip netns exec`), for tests. */
  netns?: string;
  /** Wait before restarting a conntrack process that exited (default 1 s). */
  restartMs?: number;
}

/**
 * Connection events from the kernel's conntrack table through `conntrack -E -e NEW,UPDATE,DESTROY -o
 * timestamp,extended,id` (conntrack-tools, ctnetlink event groups). Chosen over NFLOG/ulogd2 because it needs no
 * iptables rule of its own (the firewall subsystem stays the only writer of iptables), reports each connection
 * once instead of each packet, and carries the connection mark and byte counters. The probe runs through the
 * panel's {@link CommandRunner} (`conntrack --version`); the event stream is a long-lived child started with an
 * argv array through execa (the runner only returns finished commands), read line by line.
 */
export class ConntrackSource implements FlowSource {
  constructor(private readonly runner: CommandRunner, private readonly opts: ConntrackSourceOptions = {}) {}

  async available(): Promise<boolean> {
    try {
      const res = await this.runner.run('conntrack', ['--version'], { allowFailure: true });
      return res.exitCode === 0;
    } catch {
      return false;
    }
  }

  private argv(): [string, string[]] {
    const args = ['-E', '-e', 'NEW,UPDATE,DESTROY', '-o', 'timestamp,extended,id', '-b', '4194304'];
    // stdbuf: conntrack writes through stdio, which a pipe would otherwise buffer in 4 KiB blocks.
    const cmd: [string, string[]] = ['stdbuf', ['-oL', 'conntrack', ...args]];
    return this.opts.netns ? ['ip', ['netns', 'exec', this.opts.netns, cmd[0], ...cmd[1]]] : cmd;
  }

  start(onEvent: (event: FlowEvent) => void, onError: (err: unknown) => void): FlowSubscription {
    let stopped = false;
    let child: ResultPromise | null = null;
    let timer: NodeJS.Timeout | null = null;
    const launch = () => {
      const [file, args] = this.argv();
      const proc = execa(file, args, {
        stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false, cleanup: true,
        env: { PATH: `${process.env.PATH ?? '/usr/bin:/bin'}:/usr/sbin:/sbin` },
      });
      child = proc;
      if (proc.stdout) {
        const lines = createInterface({ input: proc.stdout });
        lines.on('line', (line) => {
          const event = parseConntrackLine(line);
          if (event) onEvent(event);
        });
      }
      let stderr = '';
      proc.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-2000);
      });
      void proc.then((result) => {
        child = null;
        if (stopped) return;
        const reason = stderr.trim().split('\n').pop() || `exit code ${String(result.exitCode)}`;
        onError(new Error(`conntrack: ${reason}`));
        timer = setTimeout(launch, this.opts.restartMs ?? 1_000);
        timer.unref();
      });
    };
    launch();
    return {
      stop: async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        const running = child;
        if (running) {
          running.kill('SIGTERM');
          await running.catch(() => undefined);
        }
      },
    };
  }
}

/** In-memory twin: tests and the simulated data plane push events by hand; `installed` toggles availability. */
export class SimulatedFlowSource implements FlowSource {
  installed = true;
  private readonly listeners = new Set<(event: FlowEvent) => void>();

  async available(): Promise<boolean> {
    return this.installed;
  }

  start(onEvent: (event: FlowEvent) => void): FlowSubscription {
    this.listeners.add(onEvent);
    return { stop: async () => void this.listeners.delete(onEvent) };
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
