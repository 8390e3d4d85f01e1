// Linux driver on the real tools inside a network namespace this test creates: the contract, plus linux specifics.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { execa } from 'execa';
import type { InterfaceSpec } from '../../panel/dataplane/wireguard/driver.ts';
import { IptablesFirewall } from '../../panel/dataplane/firewall/linux/iptables-firewall.ts';
import type { ServerFirewallSpec } from '../../panel/dataplane/firewall/firewall.ts';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { reconcile } from '../../panel/dataplane/reconcile.ts';
import { LinuxDriver } from '../../panel/dataplane/wireguard/linux/linux-driver.ts';
import { ExecaRunner, type CommandRunner, type RunOptions } from '../../panel/dataplane/linux/runner.ts';
import { UAPI_DIR, uapiSocketPath } from '../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { runDriverContract } from '../contract/driver.contract.ts';
import { createNamespace, destroyAll, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { nodeEvalArgs } from '../helpers/node-script.ts';
import { treeModuleUrl } from '../../shared/tree-module.ts';

const TOOLS = ['wg', 'wireguard-go', 'ip', 'iptables', 'iptables-save', 'iptables-restore', 'sysctl'];
const gate = (t: TestContext) => requireTools(t, TOOLS, { root: true });

async function ifindex(ns: string, name: string): Promise<number | null> {
  const result = await execIn(ns, 'ip', ['-j', 'link', 'show', 'dev', name], { allowFailure: true });
  if (result.exitCode !== 0) return null;
  return (JSON.parse(result.stdout) as Array<{ ifindex: number }>)[0]?.ifindex ?? null;
}

runDriverContract(
  'linux (wireguard-go in a network namespace)',
  async () => {
    const ns = await createNamespace('vht');
    const stateDir = await mkdtemp(join(tmpdir(), 'vht-state-'));
    const driver = new LinuxDriver({ runner: new ExecaRunner({ netns: ns }), stateDir, wireguard: 'auto' });
    return {
      driver,
      interfaceName: uniqueWgName,
      linkIdentity: (name) => ifindex(ns, name),
      holdName: holdUapiSocket,
      cleanup: async () => {
        await destroyNamespace(ns);
        await rm(stateDir, { recursive: true, force: true });
      },
    };
  },
  { gate },
);

/**
 * A live "daemon in another namespace" holding `name`: a listener on its UAPI socket in the shared
 * /var/run/wireguard. Resolves to a release that closes it (which removes the socket file).
 */
async function holdUapiSocket(name: string): Promise<() => Promise<void>> {
  await mkdir(UAPI_DIR, { recursive: true, mode: 0o755 });
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(uapiSocketPath(name), resolve);
  });
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Records every command it runs (argv only), then runs it. */
class RecordingRunner implements CommandRunner {
  readonly calls: string[][] = [];
  constructor(private readonly inner: CommandRunner) {}
  run(cmd: string, args: string[], opts?: RunOptions) {
    this.calls.push([cmd, ...args]);
    return this.inner.run(cmd, args, opts);
  }
}

const spec = (name: string, over: Partial<InterfaceSpec> = {}): InterfaceSpec => ({
  name,
  privateKey: generateKeyPair().privateKey,
  listenPort: 53000 + Math.floor(Math.random() * 5000),
  address: '10.66.0.1/24',
  addressIpv6: null,
  mtu: 0,
  ...over,
});

describe('LinuxDriver specifics', () => {
  const stateDirs: string[] = [];
  after(async () => {
    await destroyAll();
    for (const dir of stateDirs) await rm(dir, { recursive: true, force: true });
  });

  async function fixture() {
    const ns = await createNamespace('vht');
    const stateDir = await mkdtemp(join(tmpdir(), 'vht-state-'));
    stateDirs.push(stateDir);
    const runner = new RecordingRunner(new ExecaRunner({ netns: ns }));
    return { ns, runner, stateDir, driver: new LinuxDriver({ runner, stateDir }) };
  }

  it('ensure of a right interface runs only reads; one peer is exactly one wg set', async (t) => {
    if (!gate(t)) return;
    const { ns, runner, driver } = await fixture();
    try {
      const s = spec(uniqueWgName());
      await driver.ensureInterface(s);
      runner.calls.length = 0;
      await driver.ensureInterface(s);
      const reads = runner.calls.map((c) => c.slice(0, 3).join(' '));
      for (const call of reads) assert.match(call, /^(wg show|ip -j addr|iptables-save|sysctl -n)/, call);
      runner.calls.length = 0;
      const peer = { publicKey: generateKeyPair().publicKey, allowedIps: ['10.66.0.2/32'], persistentKeepalive: 25 };
      await driver.applyPeers(s.name, { upsert: [peer], remove: [] });
      assert.deepEqual(runner.calls, [
        ['wg', 'set', s.name, 'peer', peer.publicKey, 'allowed-ips', '10.66.0.2/32', 'persistent-keepalive', '25'],
      ]);
      const dump = await execIn(ns, 'wg', ['show', s.name, 'allowed-ips']);
      assert.equal(dump.stdout.trim(), `${peer.publicKey}\t10.66.0.2/32`);
    } finally {
      await destroyNamespace(ns);
    }
  });

  it('keeps NAT and forward rules per interface in dedicated chains (firewall seam), and removes only its own', async (t) => {
    if (!gate(t)) return;
    const { ns, runner, driver } = await fixture();
    try {
      const firewall = new IptablesFirewall({ runner, apiPort: null, families: [4] });
      const a = spec(uniqueWgName());
      const b = spec(uniqueWgName(), { address: '10.67.0.1/24' });
      const fwSpec = (s: InterfaceSpec, over: Partial<ServerFirewallSpec>): ServerFirewallSpec => ({
        name: s.name, subnets: [s.address], listenPort: s.listenPort, externalIp: null, externalInterface: null,
        internalTraffic: true, peers: [], forwards: [], ...over,
      });
      await driver.ensureInterface(a);
      await driver.ensureInterface(b);
      await firewall.ensureGlobal({ internal_traffic: true, ip_forward: true, policy_forward: 'ACCEPT', policy_input: 'ACCEPT', policy_output: 'ACCEPT' }, []);
      await firewall.ensureServer(fwSpec(a, { internalTraffic: false, externalIp: '192.0.2.10' }));
      await firewall.ensureServer(fwSpec(b, { externalInterface: 'eth9' }));
      const save = async () => (await execIn(ns, 'iptables-save', [])).stdout;
      let text = await save();
      assert.match(text, /^-A POSTROUTING -j VPNHOST-POST$/m);
      assert.match(text, /^-A FORWARD -j VPNHOST-FWD$/m);
      assert.match(text, /^-A PREROUTING -j VPNHOST-MARK$/m);
      assert.ok(text.includes(`-A VPNHOST-MARK-${a.name} -j MARK --set-xmark 0x1000000/0x1000000`));
      assert.ok(text.includes(`-A VPNHOST-POST-${a.name} -s 10.66.0.0/24 ! -o ${a.name} -m mark --mark 0x1000000/0x1000000 -j SNAT --to-source 192.0.2.10`));
      assert.ok(text.includes(`-A VPNHOST-POST-${b.name} -s 10.67.0.0/24 -o eth9 -m mark --mark 0x1000000/0x1000000 -j MASQUERADE`));
      assert.ok(text.includes(`-A VPNHOST-FWD-${a.name} -i ${a.name} -o ${a.name} -m conntrack ! --ctstate DNAT -j DROP`));
      assert.ok(!text.includes(`-i ${b.name} -o ${b.name}`));
      await firewall.ensureServer(fwSpec(a, { internalTraffic: true, externalIp: '192.0.2.10' }));
      text = await save();
      assert.ok(!text.includes(`-i ${a.name} -o ${a.name}`));
      await firewall.removeServer(a.name);
      await driver.removeInterface(a.name);
      text = await save();
      assert.ok(!text.includes(`VPNHOST-POST-${a.name}`) && !text.includes(`-i ${a.name}`));
      assert.ok(text.includes(`-A VPNHOST-POST-${b.name} -s 10.67.0.0/24 -o eth9`));
      assert.equal((await execIn(ns, 'sysctl', ['-n', 'net.ipv4.ip_forward'])).stdout.trim(), '1');
    } finally {
      await destroyNamespace(ns);
    }
  });

  it('never lists nor reconciles away an interface it did not create', async (t) => {
    if (!gate(t)) return;
    const { ns, driver } = await fixture();
    try {
      const foreign = uniqueWgName();
      await execIn(ns, 'wireguard-go', [foreign]);
      const mine = spec(uniqueWgName());
      await driver.ensureInterface(mine);
      assert.deepEqual(await driver.listInterfaces(), [mine.name]);
      await reconcile(driver, []);
      assert.deepEqual(await driver.listInterfaces(), []);
      assert.ok((await ifindex(ns, foreign)) !== null, 'foreign interface left alone');
      assert.equal(await ifindex(ns, mine.name), null);
    } finally {
      await destroyNamespace(ns);
    }
  });

  it('wireguard-go outlives the process that created the interface', async (t) => {
    if (!gate(t)) return;
    const { ns, stateDir, driver } = await fixture();
    try {
      const s = spec(uniqueWgName());
      const script = [
        `import { LinuxDriver } from ${JSON.stringify(treeModuleUrl('../../panel/dataplane/wireguard/linux/linux-driver', import.meta.url))};`,
        `import { ExecaRunner } from ${JSON.stringify(treeModuleUrl('../../panel/dataplane/linux/runner', import.meta.url))};`,
        `const d = new LinuxDriver({ runner: new ExecaRunner({ netns: ${JSON.stringify(ns)} }), stateDir: ${JSON.stringify(stateDir)} });`,
        `await d.ensureInterface(JSON.parse(process.env.SPEC));`,
      ].join('\n');
      await execa(process.execPath, nodeEvalArgs(script), {
        env: { SPEC: JSON.stringify(s) },
        timeout: 60_000,
      });
      const state = await driver.inspect(s.name);
      assert.equal(state?.listenPort, s.listenPort);
      assert.deepEqual(await driver.listInterfaces(), [s.name], 'the state file records the interface as managed');
    } finally {
      await destroyNamespace(ns);
    }
  });

  it('reports a real handshake from a client in another namespace', async (t) => {
    if (!gate(t)) return;
    const { ns, driver } = await fixture();
    const clientNs = await createNamespace('vhc');
    try {
      await vethPair(ns, clientNs, '192.0.2.1/24', '192.0.2.2/24');
      const server = spec(uniqueWgName(), { address: '10.68.0.1/24' });
      await driver.ensureInterface(server);
      const client = generateKeyPair();
      await driver.applyPeers(server.name, { upsert: [{ publicKey: client.publicKey, allowedIps: ['10.68.0.2/32'], persistentKeepalive: 0 }], remove: [] });
      const serverState = await driver.inspect(server.name);
      assert.ok(serverState);
      const cname = uniqueWgName();
      await execIn(clientNs, 'wireguard-go', [cname]);
      await new ExecaRunner({ netns: clientNs }).run('wg', ['set', cname, 'private-key', '/dev/stdin', 'peer', serverState.publicKey,
        'endpoint', `192.0.2.1:${server.listenPort}`, 'allowed-ips', '10.68.0.0/24'], { input: `${client.privateKey}\n` });
      await execIn(clientNs, 'ip', ['addr', 'add', '10.68.0.2/24', 'dev', cname]);
      await execIn(clientNs, 'ip', ['link', 'set', cname, 'up']);
      await execIn(clientNs, 'ping', ['-c', '1', '-W', '5', '10.68.0.1']);
      const peer = (await driver.inspect(server.name))?.peers[0];
      assert.equal(peer?.publicKey, client.publicKey);
      assert.equal(peer?.endpoint?.startsWith('192.0.2.2:'), true);
      assert.ok((peer?.latestHandshake ?? 0) > 0);
      assert.ok((peer?.transferRx ?? 0) > 0 && (peer?.transferTx ?? 0) > 0);
    } finally {
      await destroyNamespace(clientNs);
      await destroyNamespace(ns);
    }
  });
});
