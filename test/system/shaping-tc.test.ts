// Linux tc shaper on the real kernel inside a network namespace this test creates: the shaper contract, plus tc specifics.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import { ExecaRunner, type CommandRunner, type RunOptions } from '../../panel/dataplane/linux/runner.ts';
import { BATCH_LINES, IFB_QUEUE_PACKETS, TcShaper } from '../../panel/dataplane/shaping/linux/tc-shaper.ts';
import { runShaperContract } from '../contract/shaper.contract.ts';
import { createNamespace, destroyAll, destroyNamespace, execIn } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

const TOOLS = ['ip', 'tc'];
const gate = (t: TestContext) => requireTools(t, TOOLS, { root: true });

/** Counts `tc -batch` runs that write (not only `show` lines) and keeps their input, then runs the command. */
class CountingRunner implements CommandRunner {
  batches: string[] = [];
  constructor(private readonly inner: CommandRunner) {}
  run(cmd: string, args: string[], opts?: RunOptions) {
    const writes = (opts?.input ?? '').split('\n').some((line) => line.trim() && !/^\S+ show /.test(line));
    if (cmd === 'tc' && args.includes('-batch') && writes) this.batches.push(opts?.input ?? '');
    return this.inner.run(cmd, args, opts);
  }
}

/** A veth pair inside `ns` whose first end the shaper may use. */
async function vethIn(ns: string): Promise<string> {
  const id = randomInt(100000, 1000000);
  const name = `vs${id}`;
  await execIn(ns, 'ip', ['link', 'add', name, 'type', 'veth', 'peer', 'name', `vp${id}`]);
  await execIn(ns, 'ip', ['link', 'set', name, 'up']);
  await execIn(ns, 'ip', ['link', 'set', `vp${id}`, 'up']);
  return name;
}

runShaperContract(
  'linux tc (in a network namespace)',
  async () => {
    const ns = await createNamespace('vhs');
    const runner = new CountingRunner(new ExecaRunner({ netns: ns }));
    return {
      shaper: new TcShaper({ runner }),
      makeInterface: () => vethIn(ns),
      restart: () => new TcShaper({ runner }),
      writes: () => runner.batches.length,
      cleanup: () => destroyNamespace(ns),
    };
  },
  { gate },
);

describe('TcShaper on the kernel', () => {
  after(() => destroyAll());

  it('detects this kernel: u32 and ifb, and a leaf qdisc from the preference list', async (t) => {
    if (!gate(t)) return;
    const ns = await createNamespace('vhs');
    const runner = new ExecaRunner({ netns: ns });
    const caps = await new TcShaper({ runner }).capabilities();
    assert.equal(caps.u32, true);
    assert.equal(caps.ifb, true);
    // The probe's device is gone again.
    const links = await execIn(ns, 'ip', ['-o', 'link']);
    assert.doesNotMatch(links.stdout, /vhprobe/);
    const forced = await new TcShaper({ runner, leafPreference: ['no-such-qdisc', 'bfifo'] }).capabilities();
    assert.equal(forced.leaf, 'bfifo');
    await destroyNamespace(ns);
  });

  it('one peer change is one small tc batch; a fair leaf goes under each new class; remove leaves no trace', async (t) => {
    if (!gate(t)) return;
    const ns = await createNamespace('vhs');
    try {
      const runner = new CountingRunner(new ExecaRunner({ netns: ns }));
      const shaper = new TcShaper({ runner, leafPreference: ['bfifo'] });
      const name = await vethIn(ns);
      const target = { name, address: '10.66.0.1/16' };
      const peers = Array.from({ length: 500 }, (_, i) => ({ key: `k${i}`, ipv4: `10.66.${i >> 8}.${(i & 255) + 2 > 255 ? 1 : (i & 255) + 2}`, ipv6: null, downloadMbit: 3, uploadMbit: 2 }));
      const unique = [...new Map(peers.map((p) => [p.ipv4, p])).values()];
      await shaper.ensure(target, unique);
      // A rebuild of ~500 peers: runs of at most BATCH_LINES lines.
      assert.ok(runner.batches.length > 1);
      for (const batch of runner.batches) assert.ok(batch.trimEnd().split('\n').length <= BATCH_LINES);
      runner.batches = [];
      await shaper.apply(target, { upsert: [{ key: 'new', ipv4: '10.66.9.9', ipv6: 'fd66::9:9', downloadMbit: 7, uploadMbit: 7 }], remove: [unique[3].key] });
      assert.equal(runner.batches.length, 1);
      const lines = runner.batches[0].trimEnd().split('\n');
      // New: a class and its leaf per direction, and per direction its IPv4 node (group block) and IPv6 nodes (root
      // block → group, group block → class); removed: its IPv4 node and class per direction.
      assert.equal(lines.length, (1 + 1 + 3) * 2 + (1 + 1) * 2, lines.join('\n'));
      const qdiscs = await execIn(ns, 'tc', ['qdisc', 'show', 'dev', name]);
      assert.match(qdiscs.stdout, /qdisc bfifo \S+ parent 109:909 /);
      const view = await shaper.show(name, 'new');
      assert.match(view, /class 109:909 rate 7Mbit ceil 7Mbit leaf bfifo peer new 10\.66\.9\.9 fd66::9:9;/);
      assert.match(view, /\n    filter 1: 200:9:90a ip6 fd66::9:9 flowid 1:109\n    filter 109: 2:9:a ip6 fd66::9:9 flowid 109:909\n/);
      // Something else changes a class behind the panel's back: ensure puts back only that.
      await execIn(ns, 'tc', ['class', 'change', 'dev', name, 'parent', '109:', 'classid', '109:909', 'htb', 'rate', '1mbit']);
      runner.batches = [];
      await new TcShaper({ runner, leafPreference: ['bfifo'] }).ensure(target, [...unique.filter((_, i) => i !== 3), { key: 'new', ipv4: '10.66.9.9', ipv6: 'fd66::9:9', downloadMbit: 7, uploadMbit: 7 }]);
      assert.deepEqual(runner.batches, ['class replace dev ' + name + ' parent 109: classid 109:909 htb rate 7mbit ceil 7mbit burst 1600b cburst 1600b quantum 1514\n']);
      await shaper.remove(name);
      const after = await execIn(ns, 'tc', ['qdisc', 'show', 'dev', name]);
      assert.doesNotMatch(after.stdout, /htb|ingress/);
      const links = await execIn(ns, 'ip', ['-o', 'link']);
      assert.doesNotMatch(links.stdout, new RegExp(`ifb-${name}`));
    } finally {
      await destroyNamespace(ns);
    }
  });

  // The default pfifo under an HTB class takes its limit from the device's queue length when the class is made (a hidden
  // qdisc tc does not show): the IFB's queue length is what sizes the upload classes' buffers.
  it('the upload IFB queues as many packets as a WireGuard TUN, an old one with the default 32 included', async (t) => {
    if (!gate(t)) return;
    const ns = await createNamespace('vhs');
    try {
      const shaper = new TcShaper({ runner: new ExecaRunner({ netns: ns }), leafPreference: [] });
      const name = await vethIn(ns);
      const ifb = `ifb-${name}`;
      // an IFB made before this release kept the kernel's default queue (32 packets): ensure corrects it
      await execIn(ns, 'ip', ['link', 'add', 'name', ifb, 'type', 'ifb']);
      assert.match((await execIn(ns, 'ip', ['-o', 'link', 'show', 'dev', ifb])).stdout, / qlen 32\b/);
      await shaper.ensure({ name, address: '10.67.0.1/24' }, [{ key: 'a', ipv4: '10.67.0.2', ipv6: null, downloadMbit: 8, uploadMbit: 8 }]);
      assert.match((await execIn(ns, 'ip', ['-o', 'link', 'show', 'dev', ifb])).stdout, new RegExp(` qlen ${IFB_QUEUE_PACKETS}\\b`));
      assert.match((await execIn(ns, 'tc', ['class', 'show', 'dev', ifb])).stdout, /class htb 100:\S+ root prio 0 rate 8Mbit ceil 8Mbit/);
      // a new IFB is made with it
      await shaper.remove(name);
      await shaper.ensure({ name, address: '10.67.0.1/24' }, [{ key: 'a', ipv4: '10.67.0.2', ipv6: null, downloadMbit: 8, uploadMbit: 8 }]);
      assert.match((await execIn(ns, 'ip', ['-o', 'link', 'show', 'dev', ifb])).stdout, new RegExp(` qlen ${IFB_QUEUE_PACKETS}\\b`));
    } finally {
      await destroyNamespace(ns);
    }
  });

  it('a failed batch surfaces tc\'s complaint and the next apply asks for an ensure', async (t) => {
    if (!gate(t)) return;
    const ns = await createNamespace('vhs');
    try {
      const shaper = new TcShaper({ runner: new ExecaRunner({ netns: ns }) });
      const name = await vethIn(ns);
      const target = { name, address: '10.67.0.1/24' };
      await shaper.ensure(target, []);
      // A filter the panel does not know about holds the handle the next peer needs.
      await execIn(ns, 'tc', ['filter', 'add', 'dev', name, 'parent', '100:', 'prio', '1', 'protocol', 'ip', 'handle', '1:5:1', 'u32', 'ht', '1:5:', 'match', 'ip', 'dst', '10.67.0.5/32', 'flowid', '100:5']);
      await assert.rejects(shaper.apply(target, { upsert: [{ key: 'a', ipv4: '10.67.0.5', ipv6: null, downloadMbit: 1, uploadMbit: 0 }], remove: [] }), {
        name: 'ShapingError', message: /^tc: /,
      });
      await assert.rejects(shaper.apply(target, { upsert: [], remove: [] }), { message: /ensure it first/ });
      await shaper.ensure(target, [{ key: 'a', ipv4: '10.67.0.5', ipv6: null, downloadMbit: 1, uploadMbit: 0 }]);
      assert.match(await shaper.show(name, 'a'), /class 100:5 rate 1Mbit/);
    } finally {
      await destroyNamespace(ns);
    }
  });
});
