// The daemon watchdog: restarts a crashed daemon, backs off when restarts fail, leaves healthy ones alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DaemonWatchdog, type WatchedDaemon } from '../../../panel/services/daemon-watchdog.ts';

/** A daemon double: `alive` is flipped by tests; `restart` brings it back unless `broken`. */
interface FakeDaemon {
  alive: boolean;
  broken: boolean;
  restarts: number;
  daemon: WatchedDaemon;
}

function fakeDaemon(name: string): FakeDaemon {
  const d: FakeDaemon = {
    alive: true,
    broken: false,
    restarts: 0,
    daemon: {
      name,
      crashed: async () => (d.alive ? null : `${name} exited`),
      restart: async () => {
        d.restarts++;
        if (d.broken) throw new Error('port taken');
        d.alive = true;
      },
    },
  };
  return d;
}

describe('DaemonWatchdog', () => {
  it('restarts a crashed daemon once and leaves a running one alone', async () => {
    let now = 0;
    const dns = fakeDaemon('dns');
    const ike = fakeDaemon('ikev2');
    const dog = new DaemonWatchdog({ daemons: [dns.daemon, ike.daemon], now: () => now });
    await dog.check();
    assert.equal(dns.restarts + ike.restarts, 0);
    dns.alive = false;
    now += 5_000;
    await dog.check();
    assert.equal(dns.restarts, 1);
    assert.equal(dns.alive, true);
    assert.equal(ike.restarts, 0);
    assert.deepEqual(dog.stats('dns'), { restarts: 1, failures: 0, nextAttemptAt: 10_000 });
    now += 5_000;
    await dog.check(); // up for a whole check: the backoff is reset
    assert.equal(dog.stats('dns').nextAttemptAt, 0);
  });

  it('backs off exponentially while restarts fail, up to the cap, and recovers', async () => {
    let now = 0;
    const dns = fakeDaemon('dns');
    dns.alive = false;
    dns.broken = true;
    const dog = new DaemonWatchdog({ daemons: [dns.daemon], now: () => now, backoffMs: 1_000, maxBackoffMs: 8_000 });
    const attemptsAt: number[] = [];
    for (now = 0; now <= 40_000; now += 500) {
      const before = dns.restarts;
      await dog.check();
      if (dns.restarts > before) attemptsAt.push(now);
    }
    assert.deepEqual(attemptsAt, [0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000, 39_000]);
    assert.equal(dog.stats('dns').failures, 8);
    dns.broken = false;
    now = 47_000;
    await dog.check();
    assert.equal(dns.alive, true);
    assert.equal(dog.stats('dns').restarts, 1);
  });

  it('counts a restart after which the daemon is still down as a failure', async () => {
    const dns = fakeDaemon('dns');
    dns.alive = false;
    dns.daemon.restart = async () => void dns.restarts++; // "succeeds" but the process never comes up
    const dog = new DaemonWatchdog({ daemons: [dns.daemon], now: () => 0 });
    await dog.check();
    assert.deepEqual(dog.stats('dns'), { restarts: 0, failures: 1, nextAttemptAt: 5_000 });
  });

  it('overlapping checks share one round; stop waits for it', async () => {
    const dns = fakeDaemon('dns');
    dns.alive = false;
    let release!: () => void;
    dns.daemon.restart = () => new Promise<void>((r) => (release = () => { dns.restarts++; dns.alive = true; r(); }));
    const dog = new DaemonWatchdog({ daemons: [dns.daemon] });
    dog.start(60_000);
    const a = dog.check();
    const b = dog.check();
    assert.equal(a, b);
    await new Promise((r) => setImmediate(r));
    release();
    await dog.stop();
    assert.equal(dns.restarts, 1);
  });
});
