// FlowSource contract: what every kernel source of logged packets (ulogd2 on NFLOG, the in-memory twin) must do.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowEvent } from '../../panel/dataplane/traffic-log/flow-event.ts';
import type { FlowSource } from '../../panel/dataplane/traffic-log/flow-source.ts';
import { lazyFixture } from '../helpers/contract-fixture.ts';

/** What an implementation hands the contract. */
export interface FlowSourceFixture {
  source: FlowSource;
  /**
   * Makes the kernel (or the twin) log one packet of `protocol` from `src` to `dst` in state `new` to the source's
   * NFLOG group: a ping through a logging rule, or an emitted event.
   */
  produce(): Promise<void>;
  /** The packet `produce` makes: its source and destination addresses and protocol. */
  expected: { src: string; dst: string; protocol: string; family: 4 | 6 };
  cleanup(): Promise<void>;
}

/** Options of {@link runFlowSourceContract}. */
export interface FlowSourceContractOptions {
  gate?(t: TestContext): boolean;
}

/** Waits (readiness, never a fixed time) until `check` holds, producing a packet each round; fails after `rounds`. */
async function until(produce: () => Promise<void>, check: () => boolean, what: string, rounds = 200): Promise<void> {
  for (let i = 0; i < rounds && !check(); i++) {
    await produce();
    await sleep(50);
  }
  assert.ok(check(), what);
}

/** Runs the contract against the source `setup` builds (one fixture for the suite, built on first use). */
export function runFlowSourceContract(label: string, setup: () => Promise<FlowSourceFixture>, opts: FlowSourceContractOptions = {}): void {
  describe(`FlowSource contract: ${label}`, () => {
    const lazy = lazyFixture(setup, (built) => built.cleanup(), opts.gate);
    let fx: FlowSourceFixture;
    const ready = async (t: TestContext): Promise<boolean> => {
      if (!(await lazy.ready(t))) return false;
      fx = lazy.fx();
      return true;
    };

    it('names a usable NFLOG group and batch size, and says it is available', async (t) => {
      if (!(await ready(t))) return;
      const { group, threshold } = fx.source.nflog;
      assert.ok(Number.isInteger(group) && group >= 0 && group <= 65535, `group ${group}`);
      assert.ok(Number.isInteger(threshold) && threshold >= 1, `threshold ${threshold}`);
      assert.equal(await fx.source.available(), true);
      assert.equal(fx.source.state().pid, null, 'nothing runs before start');
    });

    it('delivers each logged packet as a FlowEvent while subscribed, runs a daemon meanwhile, and nothing after stop', async (t) => {
      if (!(await ready(t))) return;
      const events: FlowEvent[] = [];
      const errors: unknown[] = [];
      const sub = fx.source.start((event) => events.push(event), (err) => errors.push(err));
      const { src, dst, protocol, family } = fx.expected;
      const match = (e: FlowEvent) => e.src === src && e.dst === dst && e.protocol === protocol && e.state === 'new';
      try {
        await until(() => fx.produce(), () => events.some(match), `an event ${protocol} ${src} -> ${dst} arrives`);
        const event = events.find(match)!;
        assert.equal(event.family, family);
        assert.ok(event.time instanceof Date && !Number.isNaN(event.time.getTime()));
        assert.ok(event.length > 0 && typeof event.interface_in === 'string' && event.interface_in.length > 0);
        assert.notEqual(fx.source.state().pid, null, 'running while subscribed');
        assert.deepEqual(errors, []);
      } finally {
        await sub.stop();
      }
      assert.equal(fx.source.state().pid, null, 'stopped');
      const seen = events.length;
      await fx.produce();
      // Readiness, not a pause: packets reach a new subscriber, and still none reaches the stopped one.
      const later: FlowEvent[] = [];
      const next = fx.source.start((event) => later.push(event), () => undefined);
      try {
        await until(() => fx.produce(), () => later.some(match), 'an event for the next subscriber');
      } finally {
        await next.stop();
      }
      assert.equal(events.length, seen, 'no event after stop');
    });

    it('can be started again after a stop', async (t) => {
      if (!(await ready(t))) return;
      const events: FlowEvent[] = [];
      const sub = fx.source.start((event) => events.push(event), () => undefined);
      try {
        await until(() => fx.produce(), () => events.length > 0, 'an event after a restart');
      } finally {
        await sub.stop();
      }
    });
  });
}
