// Linux unbound resolver inside a network namespace this test creates: the DNS contract on the real daemon.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { UnboundDns } from '../../panel/dataplane/dns/linux/unbound-dns.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { runDnsContract } from '../contract/dns.contract.ts';
import { createNamespace, destroyNamespace, execIn } from '../helpers/netns.ts';
import { processAlive } from '../helpers/process-alive.ts';
import { requireTools } from '../helpers/require-tools.ts';

const gate = (t: TestContext) => requireTools(t, ['ip', 'unbound', 'unbound-control', 'unbound-control-setup', 'unbound-checkconf'], { root: true });

runDnsContract(
  'linux unbound (in a network namespace)',
  async () => {
    const ns = await createNamespace('vhd');
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-unbound-'));
    try {
      await execIn(ns, 'ip', ['link', 'set', 'lo', 'up']);
      for (const ip of ['10.77.0.1/32', '10.78.0.1/32']) await execIn(ns, 'ip', ['addr', 'add', ip, 'dev', 'lo']);
    } catch (err) {
      await destroyNamespace(ns);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const build = () => new UnboundDns({ runner: new ExecaRunner({ netns: ns }), dir: join(dir, 'unbound'), netns: ns });
    const made: UnboundDns[] = [];
    const make = () => {
      const dns = build();
      made.push(dns);
      return dns;
    };
    return {
      dns: make(),
      listen: ['10.77.0.1', '10.78.0.1'],
      kill: async (pid) => void process.kill(pid, 'SIGKILL'),
      restart: make,
      cleanup: async () => {
        for (const dns of made) await dns.stop().catch(() => undefined);
        await destroyNamespace(ns);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { gate },
);

it('linux: a live unbound whose applied config was lost is replaced, not doubled', async (t) => {
  if (!gate(t)) return;
  const ns = await createNamespace('vhd');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-unbound-'));
  const make = () => new UnboundDns({ runner: new ExecaRunner({ netns: ns }), dir: join(dir, 'unbound'), netns: ns });
  const config = { listen: ['127.0.0.1'], acl: ['10.77.0.0/24'], forwarders: ['192.0.2.53'], maxCacheTtl: 300 };
  try {
    const first = make();
    assert.equal(await first.apply(config), 'started');
    const { pid } = await first.state();
    rmSync(join(dir, 'unbound', 'applied.json'));
    const second = make();
    assert.equal(await second.apply(config), 'started');
    const now = await second.state();
    assert.equal(now.running, true);
    assert.notEqual(now.pid, pid);
    assert.equal(processAlive(pid!), false, 'the orphan was stopped');
    await second.stop();
  } finally {
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
});
