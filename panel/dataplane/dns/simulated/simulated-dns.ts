// In-memory twin of the unbound resolver: the same checks, outcomes, pids and crash reports, no process.
import { checkDnsConfig, planUnboundChange } from '../../render/unbound-conf.ts';
import { sameDnsConfig, DnsRuntimeError, type Dns, type DnsApplyOutcome, type DnsConfig, type DnsState } from '../dns.ts';

/** Options of {@link SimulatedDns}. */
export interface SimulatedDnsOptions {
  /** Version reported (default `1.17.1`, the packaged unbound's). */
  version?: string;
  /** First pid handed out (then counting up). */
  firstPid?: number;
}

/** The simulated {@link Dns}: tracks the running config and a fake pid; `crash()` plays a dying daemon. */
export class SimulatedDns implements Dns {
  private running: DnsConfig | null = null;
  private pid: number | null = null;
  private nextPid: number;
  private crashText: string | null = null;
  /** When set, the next start fails with this message (a port already taken, say). */
  failNextStart: string | null = null;

  constructor(private readonly opts: SimulatedDnsOptions = {}) {
    this.nextPid = opts.firstPid ?? 40_000;
  }

  async apply(config: DnsConfig | null): Promise<DnsApplyOutcome> {
    if (!config || config.listen.length === 0) {
      if (!this.running) return 'unchanged';
      this.halt();
      return 'stopped';
    }
    checkDnsConfig(config);
    const copy = structuredClone(config);
    if (!this.running || this.pid === null) {
      this.start(copy);
      return 'started';
    }
    if (sameDnsConfig(this.running, copy)) return 'unchanged';
    const plan = planUnboundChange(this.running, copy);
    if (plan.kind === 'restart') {
      const before = this.running;
      this.halt();
      try {
        this.start(copy);
      } catch (err) {
        this.start(before);
        throw err;
      }
      return 'restarted';
    }
    this.running = copy;
    return plan.kind === 'reload' ? 'reloaded' : 'changed';
  }

  async state(): Promise<DnsState> {
    return { running: this.pid !== null, pid: this.pid, crash: this.crashText };
  }

  async version(): Promise<string> {
    return this.opts.version ?? '1.17.1';
  }

  applied(): DnsConfig | null {
    return this.running && structuredClone(this.running);
  }

  async stop(): Promise<void> {
    this.halt();
  }

  async close(): Promise<void> {}

  /** Test hook: the daemon dies on its own (as after `kill -9`). */
  crash(signal = 'SIGKILL'): void {
    if (this.pid === null) return;
    this.crashText = `unbound (pid ${this.pid}) exited with signal ${signal}`;
    this.pid = null;
  }

  private start(config: DnsConfig): void {
    if (this.failNextStart) {
      const message = this.failNextStart;
      this.failNextStart = null;
      throw new DnsRuntimeError(message);
    }
    this.running = config;
    this.pid = this.nextPid++;
    this.crashText = null;
  }

  private halt(): void {
    this.running = null;
    this.pid = null;
  }
}
