// IPsec contract: the behaviour every IKEv2 responder implementation (simulated twin, linux charon) must show.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { IPSEC_DEVICE, type Ipsec, type IpsecDesired } from '../../panel/dataplane/ipsec/ipsec.ts';
import { IKEV2_DEFAULTS } from '../../panel/schemas/ikev2.ts';
import { generateCa, issueServerCert } from '../../panel/services/ikev2/pki.ts';

/** What an implementation hands the contract. */
export interface IpsecFixture {
  ipsec: Ipsec;
  /** Kills the daemon behind the seam's back (kill -9 of its pid; the twin's crash hook). */
  kill(pid: number): Promise<void>;
  /** A new instance on the same state (a panel restart). */
  restart(): Ipsec;
  cleanup(): Promise<void>;
}

/** A desired state with a fresh CA and server certificate (also for implementation-specific tests). */
export function contractDesired(users: IpsecDesired['users']): IpsecDesired {
  const now = new Date();
  const ca = generateCa({ common_name: 'Contract CA', organization: 'vpnhost' }, now);
  const server = issueServerCert(ca, { common_name: 'vpn.contract.test', organization: 'vpnhost', domain: 'vpn.contract.test', ip: '192.0.2.1' }, now);
  return { settings: { ...IKEV2_DEFAULTS }, caCert: ca.cert, serverCert: server.cert, serverKey: server.key, serverId: 'vpn.contract.test', users };
}

const ALICE = { username: 'alice', password: 'pw-a', address: '10.9.0.2', dns: ['10.9.0.1'] };
const BOB = { username: 'bob', password: 'pw-b', address: '10.9.0.3', dns: [] };

/** Runs the contract against the responder `setup` builds (one fixture for the whole suite). */
export function runIpsecContract(label: string, setup: () => Promise<IpsecFixture>, opts: { gate?(t: TestContext): boolean } = {}): void {
  describe(`Ipsec contract: ${label}`, () => {
    let fx: IpsecFixture | null = null;
    const ready = async (t: TestContext): Promise<IpsecFixture | null> => {
      if (opts.gate && !opts.gate(t)) return null;
      fx ??= await setup();
      return fx;
    };
    after(async () => {
      await fx?.ipsec.stop().catch(() => undefined);
      await fx?.cleanup();
    });

    it('a full load starts the daemon (pid, version); per-user changes and terminates keep the same process', async (t) => {
      const f = await ready(t);
      if (!f) return;
      const d = contractDesired([ALICE]);
      await f.ipsec.apply(d);
      const st = await f.ipsec.status();
      assert.equal(st.running, true);
      assert.equal(st.crashed, false);
      assert.ok(st.pid && st.pid > 0);
      assert.match(st.version, /^\d+\.\d+/);
      await f.ipsec.upsertUser(BOB);
      await f.ipsec.removeUser('alice');
      assert.equal(await f.ipsec.terminate('nobody'), 0);
      assert.deepEqual(await f.ipsec.listSas(), []);
      await f.ipsec.apply({ ...d, users: [BOB] });
      assert.equal((await f.ipsec.status()).pid, st.pid, 'no restart');
    });

    it('a killed daemon is reported as crashed; the next full load starts it again; a restarted panel adopts it', async (t) => {
      const f = await ready(t);
      if (!f) return;
      const d = contractDesired([ALICE]);
      await f.ipsec.apply(d);
      const pid = (await f.ipsec.status()).pid!;
      await f.kill(pid);
      const crashed = await f.ipsec.status();
      assert.equal(crashed.running, false);
      assert.equal(crashed.crashed, true);
      assert.deepEqual(await f.ipsec.listSas(), []);
      await f.ipsec.apply(d);
      const again = await f.ipsec.status();
      assert.equal(again.running, true);
      assert.notEqual(again.pid, pid);
      const adopted = f.restart();
      assert.equal((await adopted.status()).pid, again.pid);
      await adopted.apply(d);
      assert.equal((await adopted.status()).pid, again.pid, 'adopted, not restarted');
    });

    it('the TUN device is ipsec0 while the daemon runs (kernel-libipsec), also for a restarted panel; none after stop', async (t) => {
      const f = await ready(t);
      if (!f) return;
      await f.ipsec.apply(contractDesired([ALICE]));
      assert.equal(await f.ipsec.device(), IPSEC_DEVICE);
      assert.equal(await f.restart().device(), IPSEC_DEVICE);
      await f.ipsec.stop();
      assert.equal(await f.ipsec.device(), null);
    });

    it('stop ends the daemon and is not a crash', async (t) => {
      const f = await ready(t);
      if (!f) return;
      await f.ipsec.apply(contractDesired([]));
      await f.ipsec.stop();
      const st = await f.ipsec.status();
      assert.deepEqual([st.running, st.crashed, st.pid], [false, false, null]);
      await assert.rejects(() => f.ipsec.upsertUser(ALICE));
    });
  });
}
