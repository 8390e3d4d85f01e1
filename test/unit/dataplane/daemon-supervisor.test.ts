// DaemonSupervisor's policy with a fake runner and fake timers: restart backoff and its limit, readiness, stop with
// grace, deaths recorded and heard; and RestartBackoff's arithmetic.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DaemonSupervisor, type DaemonSpec, type SupervisorTimers } from '../../../panel/dataplane/linux/daemon-supervisor.ts';
import { RestartBackoff } from '../../../panel/dataplane/linux/restart-backoff.ts';
import type { CommandResult, DaemonRunner, SpawnedProcess, SpawnOptions } from '../../../panel/dataplane/linux/runner.ts';

type Exit = { code: number | null; signal: NodeJS.Signals | null; startError: string | null };

/** A child the test ends by hand; `kill` records the signal and, unless told to ignore it, ends the child. */
class FakeChild implements SpawnedProcess {
  readonly stderr = null;
  readonly signals: NodeJS.Signals[] = [];
  ignoreTerm = false;
  private end!: (exit: Exit) => void;
  readonly exited = new Promise<Exit>((resolve) => (this.end = resolve));
  constructor(readonly pid: number, readonly opts: SpawnOptions) {}
  exit(exit: Partial<Exit>): void {
    this.end({ code: null, signal: null, startError: null, ...exit });
  }
  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.signals.push(signal);
    if (signal === 'SIGKILL' || !this.ignoreTerm) this.exit({ signal });
  }
  unref(): void {}
}

class FakeRunner implements DaemonRunner {
  readonly children: FakeChild[] = [];
  private nextPid = 1000;
  async run(): Promise<CommandResult> {
    return { stdout: '', stderr: '', exitCode: 0 };
  }
  spawn(_cmd: string, _args: string[], opts: SpawnOptions = {}): SpawnedProcess {
    const child = new FakeChild(this.nextPid++, opts);
    this.children.push(child);
    return child;
  }
  last(): FakeChild {
    return this.children[this.children.length - 1];
  }
}

/** Timers the test advances: `pending` lists the scheduled delays; `fire` runs the earliest. */
class FakeTimers implements SupervisorTimers {
  t = 0;
  pending: Array<{ ms: number; fn: () => void }> = [];
  now(): number {
    return this.t;
  }
  after(ms: number, fn: () => void): () => void {
    const entry = { ms, fn };
    this.pending.push(entry);
    return () => void (this.pending = this.pending.filter((e) => e !== entry));
  }
  fire(): number {
    const entry = this.pending.shift();
    assert.ok(entry, 'a timer is pending');
    this.t += entry.ms;
    entry.fn();
    return entry.ms;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'vpnhost-supervisor-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function spec(over: Partial<DaemonSpec> = {}): DaemonSpec {
  return {
    name: 'food', cmd: 'food', args: ['-f'], detached: false, pidPath: join(dir, `food-${Math.random()}.pid`), writesPidFile: false,
    marker: { arg: '-f' }, leftover: 'kill', restart: { minMs: 100, maxMs: 400, stableMs: 1_000 }, ...over,
  };
}

/** Lets the exit handlers (promise callbacks) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RestartBackoff', () => {
  it('doubles per quick death up to the maximum, resets after a stable run, gives up at the limit', () => {
    const b = new RestartBackoff({ minMs: 100, maxMs: 400, stableMs: 1_000, maxQuickDeaths: 4 });
    assert.deepEqual([b.died(0), b.died(10), b.died(10), b.died(10)], [100, 200, 400, 400]);
    assert.equal(b.died(10), null, 'the fifth quick death in a row gives up');
    assert.equal(b.died(1_000), 100, 'a stable run starts over');
    b.reset();
    assert.equal(b.quickDeaths, 0);
  });
});

describe('DaemonSupervisor', () => {
  it('spawns through the runner, writes the pid file, restarts a dead daemon with backoff and reports why', async () => {
    const runner = new FakeRunner();
    const timers = new FakeTimers();
    const heard: string[] = [];
    const s = spec({ onExit: (why) => heard.push(why) });
    const sup = new DaemonSupervisor(runner, s, timers);
    assert.equal(await sup.start(), 1000);
    assert.equal(readFileSync(s.pidPath, 'utf8'), '1000\n');
    assert.equal(runner.last().opts.detached, false);
    assert.equal(runner.last().opts.output, 'pipe', 'without an output file, stderr is piped');

    runner.last().exit({ code: 2 });
    await settle();
    assert.deepEqual(sup.state(), { pid: null, restarts: 0, lastError: 'food (pid 1000) exited with code 2', gaveUp: false });
    assert.deepEqual(heard, ['food (pid 1000) exited with code 2']);
    assert.equal(timers.fire(), 100);
    assert.equal(sup.state().pid, 1001);
    assert.equal(sup.state().restarts, 1);

    // dies again at once: twice the delay; then a long run resets it
    runner.last().exit({ signal: 'SIGSEGV' });
    await settle();
    assert.equal(timers.fire(), 200);
    timers.t += 5_000;
    runner.last().exit({ code: 1 });
    await settle();
    assert.equal(timers.fire(), 100, 'a stable run resets the backoff');
    assert.equal(sup.state().restarts, 3);
    await sup.stop();
  });

  it('gives up after the limit of quick deaths and says so in its state', async () => {
    const runner = new FakeRunner();
    const timers = new FakeTimers();
    const sup = new DaemonSupervisor(runner, spec({ restart: { minMs: 10, maxMs: 10, stableMs: 1_000, maxQuickDeaths: 2 } }), timers);
    await sup.start();
    for (let i = 0; i < 2; i++) {
      runner.last().exit({ code: 1 });
      await settle();
      timers.fire();
    }
    runner.last().exit({ code: 1 });
    await settle();
    assert.equal(timers.pending.length, 0, 'no restart is scheduled');
    assert.deepEqual({ ...sup.state(), lastError: null }, { pid: null, restarts: 2, lastError: null, gaveUp: true });
  });

  it('without a restart policy records the death and leaves the restart to its owner', async () => {
    const runner = new FakeRunner();
    const timers = new FakeTimers();
    const sup = new DaemonSupervisor(runner, spec({ restart: null, explain: ({ output }) => output }), timers);
    await sup.start();
    runner.last().exit({ signal: 'SIGKILL' });
    await settle();
    assert.equal(timers.pending.length, 0);
    assert.deepEqual(sup.state(), { pid: null, restarts: 0, lastError: 'food (pid 1000) exited with signal SIGKILL', gaveUp: false });
    await sup.start();
    assert.deepEqual(sup.state(), { pid: 1001, restarts: 0, lastError: null, gaveUp: false }, 'a new start clears the record');
  });

  it('stop is no death: SIGTERM, SIGKILL after the grace when the daemon ignores it, no restart', async () => {
    const runner = new FakeRunner();
    const timers = new FakeTimers();
    const heard: string[] = [];
    const sup = new DaemonSupervisor(runner, spec({ stopGraceMs: 3_000, onExit: (why) => heard.push(why) }), timers);
    await sup.start();
    const child = runner.last();
    child.ignoreTerm = true;
    const stopping = sup.stop();
    await settle();
    assert.deepEqual(child.signals, ['SIGTERM']);
    assert.equal(timers.fire(), 3_000, 'the grace');
    await stopping;
    assert.deepEqual(child.signals, ['SIGTERM', 'SIGKILL']);
    assert.deepEqual(heard, []);
    assert.equal(timers.pending.length, 0);
    assert.equal(sup.state().pid, null);
  });

  it('waits for readiness; a daemon that exits first fails the start with its explained output and is not restarted', async () => {
    const runner = new FakeRunner();
    const timers = new FakeTimers();
    let readyAfter = 3;
    const sup = new DaemonSupervisor(runner, spec({ ready: async () => --readyAfter <= 0 }), timers);
    assert.equal(await sup.start(), 1000);
    assert.equal(readyAfter, 0, 'polled until ready');

    const failing = new DaemonSupervisor(runner, spec({
      ready: async () => false, explain: () => 'error: port 53 in use',
    }), timers);
    const start = failing.start();
    await settle();
    runner.last().exit({ code: 1 });
    await assert.rejects(start, { message: 'food: error: port 53 in use' });
    assert.equal(timers.pending.length, 0, 'a failed start is the caller\'s to handle');
    await sup.stop();
  });

  it('a detached daemon is spawned in its own session and released without being stopped', async () => {
    const runner = new FakeRunner();
    const sup = new DaemonSupervisor(runner, spec({ detached: true, restart: null }), new FakeTimers());
    await sup.start();
    assert.equal(runner.last().opts.detached, true);
    sup.release();
    assert.deepEqual(runner.last().signals, []);
  });
});
