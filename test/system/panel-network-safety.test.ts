// Issue 6 on the linux driver in a namespace: no lock-out through a server address, NAT never hits host traffic,
// the firewall-reset escape hatch, SIGKILL + restart, and wireguard-go sockets (stale after kill -9, live elsewhere).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { IptablesFirewall } from '../../panel/dataplane/firewall/linux/iptables-firewall.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { probeUapiSocket, uapiSocketPath } from '../../panel/dataplane/wireguard/linux/uapi-socket.ts';
import { E, OWN } from '../../panel/http/errors.ts';
import { createNamespace, destroyNamespace, execIn, namespacePids, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess, ROOT } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';

const A_VETH = '10.198.0.1';
const B_VETH = '10.198.0.2';
const SERVER_IP = '10.78.0.1';

/** Pid of the `wireguard-go IF` daemon living in `ns`, or null. */
async function daemonPid(ns: string, iface: string): Promise<number | null> {
  for (const pid of await namespacePids(ns)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (basename(argv[0] ?? '') === 'wireguard-go' && argv[argv.length - 1] === iface) return pid;
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

async function linkExists(ns: string, iface: string): Promise<boolean> {
  return (await execIn(ns, 'ip', ['link', 'show', 'dev', iface], { allowFailure: true })).exitCode === 0;
}

/** `iptables-save` of the namespace without comments and counters, sorted per table (a set of lines to diff). */
async function rules(ns: string): Promise<string[]> {
  const text = (await execIn(ns, 'iptables-save', [])).stdout;
  let table = '';
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line;
    else if (line.startsWith('-A ') || line.startsWith(':')) out.push(`${table} ${line.replace(/ \[\d+:\d+\]$/, '')}`);
  }
  return out.sort();
}

/** Polls `check` (bounded) until it returns true. */
async function eventually(what: string, check: () => Promise<boolean>, attempts = 100): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`not reached: ${what}`);
}

test('panel on the linux driver cannot be locked out through a server address, and recovers from crashes and stale sockets', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'iptables-save', 'iptables-restore', 'ipset'], { root: true })) return;
  const nsA = await createNamespace('vhsa');
  let nsB: string | null = null;
  let panel: PanelProcess | null = null;
  const stateDir = mkdtempSync(join(tmpdir(), 'vhsa-driver-'));
  try {
    nsB = await createNamespace('vhsb');
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a });
    const api = panel.client;
    const reachable = async () => (await api.request('GET', '/system/status')).statusCode === 200;
    const statusOk = async () => (await api.ok<{ status: string }>('GET', '/system/status')).status === 'OK';

    await t.test("the issue's lock-out request is refused and the API stays reachable", async () => {
      const answer = await api.request('POST', '/wireguard', { address: '127.0.0.1/8', external_ip: '192.0.2.30', endpoint: '192.0.2.30' });
      assert.deepEqual([answer.statusCode, answer.body.error], [400, OWN.RESERVED_ADDRESS]);
      assert.ok(await reachable());
      assert.deepEqual(await api.ok('GET', '/wireguard'), {});
      assert.ok(!(await rules(nsA)).some((line) => line.includes('127.0.0.0/8')));
    });

    await t.test("a server subnet overlapping the namespace's own veth network is refused", async () => {
      for (const address of [`${A_VETH}/24`, '10.198.0.5/16', '10.198.0.2/30']) {
        const answer = await api.request('POST', '/wireguard', { address, external_ip: A_VETH });
        assert.deepEqual([answer.statusCode, answer.body.error], [409, E.IP_OR_SUBNET_IN_USE], address);
      }
      assert.deepEqual(await api.ok('GET', '/wireguard'), {});
    });

    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', { name: 'safe', interface_name: iface, listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH });
    const alice = await api.ok<{ public_key: string }>('POST', '/account', { wg_name: 'safe', name: 'alice', allowed_IPs: '10.78.0.2' });
    const correct = await rules(nsA);
    /** What the namespace should hold: the panel's correct rules, plus foreign rules added on the way. */
    let expected = correct;
    const nat = correct.filter((line) => line.startsWith(`*nat -A VPNHOST-POST-${iface} `));
    assert.equal(nat.length, 1);
    assert.match(nat[0], /-m mark --mark 0x1000000\/0x1000000 /, 'NAT only for packets marked on entry from the tunnel');
    assert.ok(correct.includes(`*mangle -A VPNHOST-MARK -i ${iface} -j VPNHOST-MARK-${iface}`));
    assert.ok(correct.includes(`*mangle -A VPNHOST-MARK-${iface} -j MARK --set-xmark 0x1000000/0x1000000`));

    await t.test('NAT of a loopback subnet (made below the API) never matches the host its own traffic', async () => {
      // The firewall does what it is told; before the mark, this rule made every reply of the panel at 127.0.0.1 vanish.
      const firewall = new IptablesFirewall({ runner: new ExecaRunner({ netns: nsA }), apiPort: null, families: [4] });
      const rogue = uniqueWgName();
      try {
        await firewall.ensureServer({
          name: rogue, subnets: ['127.0.0.1/8'], listenPort: port + 1, externalIp: '192.0.2.30', externalInterface: null,
          internalTraffic: true, peers: [], forwards: [],
        });
        assert.ok((await rules(nsA)).some((line) => line.includes('-s 127.0.0.0/8') && line.includes('SNAT --to-source 192.0.2.30')));
        for (let i = 0; i < 5; i++) assert.ok(await reachable(), 'API reachable at 127.0.0.1 with the loopback NAT rule in place');
      } finally {
        await firewall.removeServer(rogue);
      }
      // That second firewall instance knew only its rogue server; a reload puts the panel's own rules back exactly.
      await api.ok('PUT', '/system/reload');
      assert.deepEqual(await rules(nsA), correct);
    });

    await t.test('after a SIGKILL and a restart the API is reachable and the rules are the same', async () => {
      await panel!.kill('SIGKILL');
      await panel!.restart();
      await eventually('boot reconcile done', statusOk);
      assert.ok(await reachable());
      assert.deepEqual(await rules(nsA), correct);
    });

    await t.test('firewall-reset removes every chain of the panel (and nothing else); a restart puts back only correct ones', async () => {
      await execIn(nsA, 'iptables', ['-A', 'INPUT', '-p', 'tcp', '--dport', '2222', '-j', 'ACCEPT']);
      await execIn(nsA, 'iptables', ['-t', 'nat', '-A', 'POSTROUTING', '-s', '10.250.0.0/24', '-o', veth.a, '-j', 'MASQUERADE']);
      const withForeign = await rules(nsA);
      expected = withForeign;
      // A set named like the panel's (the firewall subsystem keeps per-peer marks in vpnhost-* ipsets) and a foreign one.
      await execIn(nsA, 'ipset', ['create', 'vpnhost-probe-4', 'hash:ip']);
      await execIn(nsA, 'ipset', ['create', 'foreign-set', 'hash:ip']);
      await panel!.kill('SIGKILL');
      const reset = await execa('ip', ['netns', 'exec', nsA, process.execPath, join(ROOT, 'bin/vpnhost.js'), 'panel', 'firewall-reset'], {
        cwd: ROOT, reject: false, stdin: 'ignore',
      });
      assert.equal(reset.exitCode, 0, reset.stderr);
      for (const chain of ['nat: chain VPNHOST-POST', 'filter: chain VPNHOST-FWD', 'mangle: chain VPNHOST-MARK', 'nat: -A POSTROUTING -j VPNHOST-POST']) {
        assert.ok(reset.stdout.includes(`IPv4 removed ${chain}`), `${chain} in:\n${reset.stdout}`);
      }
      const after = await rules(nsA);
      assert.ok(!after.some((line) => line.includes('VPNHOST') || line.includes('vpnhost:')), after.join('\n'));
      assert.ok(after.some((line) => line.includes('--dport 2222')));
      assert.ok(after.some((line) => line.includes('-s 10.250.0.0/24')));
      assert.ok(await linkExists(nsA, iface), 'the interfaces stay');
      assert.ok(reset.stdout.includes('removed ipset vpnhost-probe-4'), reset.stdout);
      assert.deepEqual((await execIn(nsA, 'ipset', ['list', '-n'])).stdout.trim().split('\n'), ['foreign-set']);

      await panel!.restart();
      await eventually('boot reconcile done', statusOk);
      await eventually('rules put back', async () => JSON.stringify(await rules(nsA)) === JSON.stringify(withForeign));
      assert.ok(await reachable());
    });

    await t.test('a stale wireguard-go socket left by kill -9 does not block re-creating the interface', async () => {
      const pid = await daemonPid(nsA, iface);
      assert.ok(pid, 'daemon found');
      process.kill(pid, 'SIGKILL');
      await eventually('link gone with its daemon', async () => !(await linkExists(nsA, iface)));
      assert.ok(existsSync(uapiSocketPath(iface)), 'the socket file is left behind');
      assert.equal(await probeUapiSocket(uapiSocketPath(iface)), 'stale');

      assert.equal(await api.ok('PUT', '/system/reload'), 'success');
      assert.ok(await linkExists(nsA, iface));
      const fresh = await daemonPid(nsA, iface);
      assert.ok(fresh && fresh !== pid, 'a new daemon');
      assert.equal(await probeUapiSocket(uapiSocketPath(iface)), 'live');
      assert.deepEqual((await execIn(nsA, 'wg', ['show', iface, 'peers'])).stdout.trim(), alice.public_key);
      assert.deepEqual(await rules(nsA), expected);
    });

    await t.test("a live daemon's socket in another namespace answers Interface already in use, with its real message logged", async () => {
      const held = uniqueWgName();
      await execIn(nsB!, 'wireguard-go', [held]);
      const answer = await api.request('POST', '/wireguard', { name: 'clash', interface_name: held, address: '10.79.0.1/24', external_ip: A_VETH });
      assert.deepEqual([answer.statusCode, answer.body.error], [409, E.INTERFACE_IN_USE]);
      assert.equal((await api.request('GET', '/wireguard/clash')).body.error, E.WIREGUARD_SERVER_NOT_FOUND);
      assert.ok(await linkExists(nsB!, held), "the other namespace's interface is untouched");
      assert.ok(!(await linkExists(nsA, held)));
      const log = panel!.output();
      assert.match(log, /unix socket in use/);
      assert.doesNotMatch(log, /└─/, "no banner line of wireguard-go's in the log");
    });
  } finally {
    await panel?.cleanup();
    if (nsB) await destroyNamespace(nsB);
    await destroyNamespace(nsA);
    rmSync(stateDir, { recursive: true, force: true });
  }
});
