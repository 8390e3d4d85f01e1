// Linux unbound resolver inside a network namespace this test creates: the DNS contract on the real daemon.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it, type TestContext } from 'node:test';
import { execa } from 'execa';
import { DnsRuntimeError } from '../../panel/dataplane/dns/dns.ts';
import { UnboundDns } from '../../panel/dataplane/dns/linux/unbound-dns.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { runDnsContract } from '../contract/dns.contract.ts';
import { createNamespace, destroyAll, destroyNamespace, execIn } from '../helpers/netns.ts';
import { processAlive } from '../helpers/process-alive.ts';
import { requireTools } from '../helpers/require-tools.ts';

const gate = (t: TestContext) => requireTools(t, ['ip', 'unbound', 'unbound-control', 'unbound-control-setup', 'unbound-checkconf'], { root: true });

/**
 * A fresh resolver directory `<tmp>/unbound` holding the control keys of one `unbound-control-setup` run per file
 * (key generation is the slow part of a first start; the panel makes them once per data directory).
 */
let keys: string | null = null;
after(() => keys && rmSync(keys, { recursive: true, force: true }));
after(() => destroyAll()); // namespaces of a test whose setup failed before its try
async function resolverDir(): Promise<{ root: string; dir: string }> {
  if (!keys) {
    keys = mkdtempSync(join(tmpdir(), 'vpnhost-unbound-keys-'));
    await execa('unbound-control-setup', ['-d', keys], { env: { PATH: `${process.env.PATH}:/usr/sbin:/sbin` } });
  }
  const root = mkdtempSync(join(tmpdir(), 'vpnhost-unbound-'));
  const dir = join(root, 'unbound');
  mkdirSync(dir, { mode: 0o700 });
  for (const f of ['unbound_server.key', 'unbound_server.pem', 'unbound_control.key', 'unbound_control.pem']) cpSync(join(keys, f), join(dir, f));
  return { root, dir };
}

runDnsContract(
  'linux unbound (in a network namespace)',
  async () => {
    const ns = await createNamespace('vhd');
    const { root: dir, dir: unboundDir } = await resolverDir();
    try {
      await execIn(ns, 'ip', ['link', 'set', 'lo', 'up']);
      for (const ip of ['10.77.0.1/32', '10.78.0.1/32']) await execIn(ns, 'ip', ['addr', 'add', ip, 'dev', 'lo']);
    } catch (err) {
      await destroyNamespace(ns);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    const build = () => new UnboundDns({ runner: new ExecaRunner({ netns: ns }), dir: unboundDir, netns: ns });
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
  const { root: dir, dir: unboundDir } = await resolverDir();
  const make = () => new UnboundDns({ runner: new ExecaRunner({ netns: ns }), dir: unboundDir, netns: ns });
  const config = { listen: ['127.0.0.1'], acl: ['10.77.0.0/24'], forwarders: ['192.0.2.53'], maxCacheTtl: 300 };
  try {
    const first = make();
    assert.equal(await first.apply(config), 'started');
    const { pid } = await first.state();
    rmSync(join(unboundDir, 'applied.json'));
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

it('linux: a listen address another process holds fails with unbound\'s reason; a failed restart runs the previous config again', async (t) => {
  if (!gate(t)) return;
  const ns = await createNamespace('vhd');
  const { root: dir, dir: unboundDir } = await resolverDir();
  const dns = new UnboundDns({ runner: new ExecaRunner({ netns: ns }), dir: unboundDir, netns: ns });
  const blocker = execa('ip', ['netns', 'exec', ns, process.execPath, '-e',
    "require('node:dgram').createSocket('udp4').bind(53, '127.0.0.2', () => process.stdout.write('bound\\n'))"], { reject: false, stdin: 'ignore' });
  const config = { listen: ['127.0.0.1'], acl: ['10.77.0.0/24'], forwarders: ['192.0.2.53'], maxCacheTtl: 300 };
  try {
    await Promise.race([
      new Promise<void>((resolve) => blocker.stdout!.on('data', (d: Buffer) => String(d).includes('bound') && resolve())),
      blocker.then((r) => Promise.reject(new Error(`the port holder exited (${r.exitCode}) before binding: ${r.stderr}`))),
    ]);
    await assert.rejects(dns.apply({ ...config, listen: ['127.0.0.2'] }), (err: Error) => err instanceof DnsRuntimeError && /address already in use/i.test(err.message));
    assert.equal((await dns.state()).running, false);
    assert.equal(await dns.apply(config), 'started');
    await assert.rejects(dns.apply({ ...config, listen: ['127.0.0.1', '127.0.0.2'] }), DnsRuntimeError);
    const after = await dns.state();
    assert.equal(after.running, true, 'the previous config runs again');
    assert.deepEqual(dns.applied(), config);
    assert.match(readFileSync(join(unboundDir, 'unbound.conf'), 'utf8'), /interface: 127\.0\.0\.1\n(?!\s*interface: 127\.0\.0\.2)/);
    await dns.stop();
  } finally {
    blocker.kill('SIGKILL');
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
});
