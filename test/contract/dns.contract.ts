// DNS contract: the behaviour every resolver implementation (simulated twin, linux unbound) must show.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { DnsConfigError, type Dns, type DnsConfig } from '../../panel/dataplane/dns/dns.ts';

/** What an implementation hands the contract. */
export interface DnsFixture {
  dns: Dns;
  /** Two addresses the resolver may listen on (existing on the host or in the fixture's namespace). */
  listen: [string, string];
  /** Kills the daemon behind the resolver's back (kill -9 of its pid; the twin's crash hook). */
  kill(pid: number): Promise<void>;
  /** A new instance on the same state (a panel restart): it must adopt the running resolver. */
  restart(): Dns;
  cleanup(): Promise<void>;
}

/** Options of {@link runDnsContract}. */
export interface DnsContractOptions {
  gate?(t: TestContext): boolean;
}

/** The resolver's state once it reports not running (a crash or a stop it hears of asynchronously), polled up to 5 s. */
async function stateOnceStopped(dns: Dns): Promise<Awaited<ReturnType<Dns['state']>>> {
  let state = await dns.state();
  for (let i = 0; i < 100 && state.running; i++) {
    await new Promise((r) => setTimeout(r, 50));
    state = await dns.state();
  }
  return state;
}

/** Runs the contract against the resolver `setup` builds (one fixture for the whole suite, built on first use). */
export function runDnsContract(label: string, setup: () => Promise<DnsFixture>, opts: DnsContractOptions = {}): void {
  describe(`Dns contract: ${label}`, () => {
    let fx: DnsFixture;
    let building: Promise<DnsFixture> | null = null;
    const ready = async (t: TestContext): Promise<boolean> => {
      if (opts.gate && !opts.gate(t)) return false;
      building ??= setup();
      fx = await building;
      return true;
    };
    after(async () => {
      if (!building || !(await building.catch(() => null))) return;
      await fx.dns.stop().catch(() => undefined);
      await fx.cleanup();
    });
    const config = (over: Partial<DnsConfig> = {}): DnsConfig => ({
      listen: [fx.listen[0]], acl: ['10.77.0.0/24'], forwarders: ['192.0.2.53'], maxCacheTtl: 300, ...over,
    });

    it('reports a version', async (t) => {
      if (!(await ready(t))) return;
      assert.match(await fx.dns.version(), /^\d+\.\d+(\.\d+)?/);
    });

    it('starts, keeps its pid through live changes and reloads, restarts only for new listen addresses, stops', async (t) => {
      if (!(await ready(t))) return;
      const { dns } = fx;
      assert.equal(await dns.apply(null), 'unchanged');
      assert.deepEqual(await dns.state(), { running: false, pid: null, crash: null });
      assert.equal(await dns.apply(config()), 'started');
      const first = await dns.state();
      assert.equal(first.running, true);
      assert.ok(first.pid && first.pid > 0);
      assert.deepEqual(dns.applied(), config());
      assert.equal(await dns.apply(config()), 'unchanged');
      assert.equal(await dns.apply(config({ maxCacheTtl: 60, forwarders: ['192.0.2.54', '192.0.2.55'] })), 'changed');
      assert.equal((await dns.state()).pid, first.pid, 'live change keeps the process');
      assert.equal(await dns.apply(config({ maxCacheTtl: 60, forwarders: ['192.0.2.54', '192.0.2.55'], acl: ['10.77.0.0/24', '10.78.0.0/24'] })), 'reloaded');
      assert.equal((await dns.state()).pid, first.pid, 'reload keeps the process');
      assert.equal(await dns.apply(config({ listen: [...fx.listen] })), 'restarted');
      const second = await dns.state();
      assert.equal(second.running, true);
      assert.deepEqual(dns.applied()?.listen, [...fx.listen]);
      assert.equal(await dns.apply(config({ listen: [] })), 'stopped');
      assert.deepEqual(await dns.state(), { running: false, pid: null, crash: null });
      assert.equal(dns.applied(), null);
    });

    it('refuses a bad config and leaves the running resolver as it was', async (t) => {
      if (!(await ready(t))) return;
      const { dns } = fx;
      await dns.apply(config());
      const before = await dns.state();
      for (const bad of [
        config({ forwarders: ['not-an-ip'] }), config({ forwarders: [] }), config({ acl: ['10.0.0.0'] }),
        config({ maxCacheTtl: -1 }), config({ listen: [fx.listen[0], '300.1.1.1'] }),
      ]) {
        await assert.rejects(dns.apply(bad), DnsConfigError);
        assert.deepEqual(await dns.state(), before);
        assert.deepEqual(dns.applied(), config());
      }
      await dns.stop();
    });

    it('notices a crash, reports it until restarted; a new instance adopts a running resolver', async (t) => {
      if (!(await ready(t))) return;
      const { dns } = fx;
      await dns.apply(config());
      const { pid } = await dns.state();
      await fx.kill(pid!);
      const state = await stateOnceStopped(dns);
      assert.equal(state.running, false);
      assert.equal(state.pid, null);
      assert.match(state.crash ?? '', new RegExp(`unbound \\(pid ${pid}\\)`));
      assert.equal(await dns.apply(config()), 'started', 'the next apply starts it again');
      const restarted = await dns.state();
      assert.equal(restarted.crash, null);
      const again = fx.restart();
      assert.equal((await again.state()).pid, restarted.pid, 'adopted, not started twice');
      assert.equal(await again.apply(config()), 'unchanged');
      assert.equal(await again.apply(config({ maxCacheTtl: 90 })), 'changed');
      assert.equal((await again.state()).pid, restarted.pid);
      await again.stop();
      // the first instance hears of its child's end when the exit reaches its event loop, maybe after stop returned
      assert.equal((await stateOnceStopped(dns)).running, false);
    });
  });
}
