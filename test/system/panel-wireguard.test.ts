// A real panel process on the linux driver in namespace A; a real WireGuard client in namespace B pings through it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { execa } from 'execa';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { createNamespace, destroyNamespace, execIn, namespacePids, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';

const SERVER_IP = '10.77.0.1';
const A_VETH = '10.199.0.1';
const B_VETH = '10.199.0.2';

interface Account {
  name: string;
  status: string;
  allowed_IPs: string;
  private_key: string;
  public_key: string;
}

interface Server {
  name: string;
  interface_name: string;
  listen_port: string;
  public_key: string;
  external_ip: string;
}

/** `[Section]` → key → value of a wg-quick text (keys kept as written). */
function parseConfig(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1];
      out[section] = {};
    } else if (line && section) {
      const eq = line.indexOf('=');
      out[section][line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
  }
  return out;
}

/** What `wg-quick strip` leaves: the keys `wg setconf` understands. */
function stripConfig(conf: Record<string, Record<string, string>>): string {
  const wgKeys = ['PrivateKey', 'ListenPort', 'FwMark', 'PublicKey', 'PresharedKey', 'AllowedIPs', 'Endpoint', 'PersistentKeepalive'];
  return Object.entries(conf)
    .map(([section, values]) => [`[${section}]`, ...Object.entries(values).filter(([k]) => wgKeys.includes(k)).map(([k, v]) => `${k} = ${v}`)].join('\n'))
    .join('\n\n') + '\n';
}

/** One echo request through the tunnel answered within a second. */
async function pingOnce(ns: string, ip: string): Promise<boolean> {
  return (await execIn(ns, 'ping', ['-c', '1', '-W', '1', ip], { allowFailure: true })).exitCode === 0;
}

/** True as soon as a ping is answered; at most `attempts` tries (a re-enabled peer may need a fresh handshake). */
async function tunnelPasses(ns: string, ip: string, attempts = 40): Promise<boolean> {
  for (let i = 0; i < attempts; i++) if (await pingOnce(ns, ip)) return true;
  return false;
}

/** True when none of three echo requests (one second each) is answered. */
async function tunnelBlocked(ns: string, ip: string): Promise<boolean> {
  return (await execIn(ns, 'ping', ['-c', '3', '-W', '1', '-i', '0.3', ip], { allowFailure: true })).exitCode !== 0;
}

async function peersOf(ns: string, iface: string): Promise<string[]> {
  return (await execIn(ns, 'wg', ['show', iface, 'peers'])).stdout.split('\n').filter(Boolean).sort();
}

async function ifindex(ns: string, iface: string): Promise<number> {
  return (JSON.parse((await execIn(ns, 'ip', ['-j', 'link', 'show', 'dev', iface])).stdout) as Array<{ ifindex: number }>)[0].ifindex;
}

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

/** Polls `check` (bounded) until it returns true. */
async function eventually(what: string, check: () => Promise<boolean>, attempts = 100): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`not reached: ${what}`);
}

test('panel (linux driver) serves a WireGuard client end to end: disable, enable, crash, boot reconcile, delete', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'ping'], { root: true })) return;
  const nsA = await createNamespace('vhpa');
  let nsB: string | null = null;
  let panel: PanelProcess | null = null;
  const clientDir = mkdtempSync(join(tmpdir(), 'vpnhost-client-'));
  try {
    nsB = await createNamespace('vhpb');
    const veth = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: veth.a });
    const api = panel.client;
    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);

    const server = await api.ok<Server>('POST', '/wireguard', {
      name: 'sys_wg', interface_name: iface, listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH,
      allowed_ips: '10.77.0.0/24', keep_alive: 0,
    });
    assert.equal(server.interface_name, iface);
    assert.equal(server.listen_port, String(port));
    const account = await api.ok<Account>('POST', '/account', { wg_name: 'sys_wg', allowed_IPs: '10.77.0.2', name: 'alice' });
    assert.equal(account.status, 'enable');
    assert.deepEqual(await peersOf(nsA, iface), [account.public_key]);

    // The client configuration exactly as the panel hands it out, brought up with the stock tools in B.
    const text = await api.ok<string>('GET', '/account/alice/config_text');
    const conf = parseConfig(text);
    assert.equal(conf.Interface?.PrivateKey, account.private_key);
    assert.equal(conf.Interface?.Address, '10.77.0.2/32');
    assert.equal(conf.Peer?.PublicKey, server.public_key);
    assert.equal(conf.Peer?.AllowedIPs, '10.77.0.0/24');
    assert.equal(conf.Peer?.Endpoint, `${A_VETH}:${port}`, 'endpoint is external_ip:listen_port, reachable from B as is');
    const client = uniqueWgName();
    const confFile = join(clientDir, `${client}.conf`);
    writeFileSync(confFile, stripConfig(conf), { mode: 0o600 });
    await execIn(nsB, 'wireguard-go', [client]);
    await execIn(nsB, 'wg', ['setconf', client, confFile]);
    await execIn(nsB, 'ip', ['addr', 'add', conf.Interface.Address, 'dev', client]);
    await execIn(nsB, 'ip', ['link', 'set', client, 'up']);
    for (const route of conf.Peer.AllowedIPs.split(',').map((r) => r.trim())) await execIn(nsB, 'ip', ['route', 'add', route, 'dev', client]);

    await t.test('the tunnel passes traffic', async () => {
      assert.ok(await tunnelPasses(nsB!, SERVER_IP), 'ping through the tunnel answered');
      const dump = await api.ok<{ endpoint: string; latest_handshake: string }>('GET', '/account/alice/dump');
      assert.match(dump.endpoint, new RegExp(`^${B_VETH.replace(/\./g, '\\.')}:\\d+$`));
      assert.ok(Number(dump.latest_handshake) > 0);
    });

    await t.test('disable parks the peer (no address: no traffic) until the next traffic sample; enable restores both', async () => {
      const disabled = await api.ok<Account>('PUT', '/account/alice', { status: 'disable' });
      assert.equal(disabled.status, 'disable');
      assert.equal((await execIn(nsA, 'wg', ['show', iface, 'allowed-ips'])).stdout.trim(), `${account.public_key}\t(none)`);
      assert.ok(await tunnelBlocked(nsB!, SERVER_IP), 'no reply while disabled');
      const enabled = await api.ok<Account>('PUT', '/account/alice', { status: 'enable' });
      assert.equal(enabled.status, 'enable');
      assert.deepEqual(await peersOf(nsA, iface), [account.public_key]);
      assert.ok(await tunnelPasses(nsB!, SERVER_IP), 'replies again once enabled');
    });

    await t.test('the tunnel outlives a crashed panel; boot reconcile restores peers in place', async (st) => {
      const bob = await api.ok<Account>('POST', '/account', { wg_name: 'sys_wg', allowed_IPs: '10.77.0.3', name: 'bob' });
      const carol = await api.ok<Account>('POST', '/account', { wg_name: 'sys_wg', allowed_IPs: '10.77.0.4', name: 'carol', status: 'disable' });
      const want = [account.public_key, bob.public_key].sort();
      assert.deepEqual(await peersOf(nsA, iface), want);
      const indexBefore = await ifindex(nsA, iface);
      const pidBefore = await daemonPid(nsA, iface);
      assert.ok(pidBefore, 'wireguard-go daemon of the server interface found');

      // A steady ping from before the crash until the boot reconcile is over (stopped with SIGINT, bounded by -w).
      const steady = execa('ip', ['netns', 'exec', nsB!, 'ping', '-i', '0.2', '-W', '2', '-w', '120', SERVER_IP], { reject: false });
      let steadyOutput = '';
      try {
        assert.ok(await tunnelPasses(nsB!, SERVER_IP, 3), 'traffic passes before the crash');
        await panel!.kill('SIGKILL');
        assert.equal(panel!.running, false);
        assert.ok(await tunnelPasses(nsB!, SERVER_IP, 3), 'traffic passes while the panel is down');
        // Drift while the panel is down: bob's peer lost, disabled carol and a stranger present.
        const strangerPub = generateKeyPair().publicKey;
        await execIn(nsA, 'wg', ['set', iface, 'peer', bob.public_key, 'remove', 'peer', carol.public_key, 'allowed-ips', '10.77.0.4/32',
          'peer', strangerPub, 'allowed-ips', '10.77.0.200/32']);
        assert.deepEqual(await peersOf(nsA, iface), [account.public_key, carol.public_key, strangerPub].sort());

        await panel!.restart();
        await eventually('boot reconcile done', async () => (await api.ok<{ status: string }>('GET', '/system/status')).status === 'OK');
        assert.deepEqual(await peersOf(nsA, iface), want, 'desired peers restored, others removed');
      } finally {
        steady.kill('SIGINT');
        steadyOutput = String((await steady).stdout);
      }
      const stats = /(\d+) packets transmitted, (\d+) received/.exec(steadyOutput);
      assert.ok(stats, `ping summary: ${steadyOutput}`);
      st.diagnostic(`steady ping: ${stats[0]}`);
      // Only the echo in flight when ping was stopped may go unanswered.
      assert.ok(Number(stats[2]) >= Number(stats[1]) - 1, `every echo across crash and restart answered: ${stats[0]}`);
      assert.equal(await ifindex(nsA, iface), indexBefore, 'same link (not recreated)');
      assert.equal(await daemonPid(nsA, iface), pidBefore, 'same wireguard-go daemon (not restarted)');
      assert.ok(await tunnelPasses(nsB!, SERVER_IP, 3), 'traffic passes after the restart');
      assert.equal((await api.ok<Account>('GET', '/account/carol')).status, 'disable');
    });

    await t.test('delete removes the peer and stops traffic', async () => {
      assert.equal(await api.ok<string>('DELETE', '/account/alice'), 'success');
      assert.ok(!(await peersOf(nsA, iface)).includes(account.public_key));
      assert.ok(await tunnelBlocked(nsB!, SERVER_IP), 'no reply after delete');
      const gone = await api.request('GET', '/account/alice');
      assert.equal(gone.body.error, 'Account not found');
    });
  } finally {
    await panel?.cleanup();
    if (nsB) await destroyNamespace(nsB);
    await destroyNamespace(nsA);
    rmSync(clientDir, { recursive: true, force: true });
  }
});
