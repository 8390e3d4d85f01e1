// Traffic logging for real: a panel (linux data plane) in a namespace logs a real WireGuard peer's traffic through its
// NFLOG chain and a supervised ulogd2; a real rsyslogd in a second namespace receives the RFC 5424 lines over UDP and
// writes them to a file; a TSDB receiver there checks the line protocol the client library sends. Every state is
// provoked (NEW/ESTABLISHED: a TCP connection, RELATED: the peer's ICMP port unreachable, INVALID: a crafted SYN+FIN,
// UNTRACKED: a raw-table NOTRACK rule) and the attributes in/out/len/tos/mark are checked against known values;
// stopping the TSDB keeps the API fast and the points arrive once it is back; disabling removes the chain.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { createNamespace, destroyNamespace, execIn, namespacePids, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { startWgClient } from '../helpers/wg-client.ts';
import { nodeScriptArgs } from '../helpers/node-script.ts';

const GW = '10.197.0.1';
const LOG = '10.197.0.2';
const GW_P = '10.198.0.1';
const PEER_LINK = '10.198.0.2';
const PEER = '10.82.0.2';
const GW_TUNNEL = '10.82.0.1';
const TSDB_PORT = 18086;
/** The skb mark of packets from a peer: the tunnel bit (firewall TUNNEL_MARK) | the account's mangle. */
const TUNNEL_MARK = 0x1000000;

/** python3: UDP datagram `argv[2]` → `argv[3]:argv[4]` from `argv[1]`; `craft-synfin`: a TCP SYN+FIN (no valid TCP state). */
const PY_UDP = 'import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind((sys.argv[1],0)); s.sendto(b"x",(sys.argv[2],int(sys.argv[3])))';
const PY_SYNFIN = [
  'import socket,struct,sys',
  'src,dst,port=sys.argv[1],sys.argv[2],int(sys.argv[3])',
  'def csum(b):',
  ' s=sum(struct.unpack("!%dH"%(len(b)//2),b)); s=(s>>16)+(s&0xffff); s+=s>>16; return ~s&0xffff',
  'tcp=struct.pack("!HHIIBBHHH",40001,port,1,0,5<<4,0x03,1024,0,0)',
  'ph=socket.inet_aton(src)+socket.inet_aton(dst)+struct.pack("!BBH",0,6,len(tcp))',
  'tcp=tcp[:16]+struct.pack("!H",csum(ph+tcp))+tcp[18:]',
  's=socket.socket(socket.AF_INET,socket.SOCK_RAW,socket.IPPROTO_TCP); s.bind((src,0)); s.sendto(tcp,(dst,0))',
].join('\n');
const PY_TCP = 'import socket,sys; c=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=5); c.close()';

async function waitFor<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Starts a long-running process in `ns`. */
function startIn(ns: string, file: string, args: string[]): ResultPromise {
  return execa('ip', ['netns', 'exec', ns, file, ...args], { reject: false, stdin: 'ignore', buffer: false });
}

/** One rsyslogd line (template `app|msgid|sd|msg`), its SD params as a map. */
interface Logged {
  sd: string;
  msg: string;
  p: Record<string, string>;
}

function readLogged(file: string): Logged[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('|flow|')).map((line) => {
    const [, , sd, msg] = line.split('|');
    const p: Record<string, string> = {};
    for (const m of sd.matchAll(/ (\w+)="([^"]*)"/g)) p[m[1]] = m[2];
    return { sd, msg, p };
  });
}

test('traffic logging: NFLOG → ulogd2 → rsyslogd (RFC 5424 over UDP) and the TSDB write API, every state of a real WireGuard peer', async (t) => {
  if (!requireTools(t, ['rsyslogd', 'ulogd', 'wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'ping', 'python3', 'ss'], { root: true })) return;
  const work = mkdtempSync(join(tmpdir(), 'vpnhost-tl-sys-'));
  const nsGw = await createNamespace('vhtg');
  let nsLog: string | null = null;
  let nsPeer: string | null = null;
  let panel: PanelProcess | null = null;
  let rsyslog: ResultPromise | null = null;
  let tsdb: ResultPromise | null = null;
  try {
    nsLog = await createNamespace('vhtl');
    nsPeer = await createNamespace('vhtp');
    const toLog = await vethPair(nsGw, nsLog, `${GW}/30`, `${LOG}/30`);
    await vethPair(nsGw, nsPeer, `${GW_P}/30`, `${PEER_LINK}/30`);
    const out = join(work, 'syslog.out');
    const conf = join(work, 'rsyslog.conf');
    writeFileSync(conf, [
      `global(workDirectory="${work}")`,
      'module(load="imudp")',
      `input(type="imudp" address="${LOG}" port="514")`,
      'template(name="parsed" type="string" string="%app-name%|%msgid%|%structured-data%|%msg%\\n")',
      `*.* action(type="omfile" file="${out}" template="parsed")`,
      '',
    ].join('\n'));
    rsyslog = startIn(nsLog, 'rsyslogd', ['-n', '-f', conf, '-i', join(work, 'rsyslog.pid')]);
    const tsdbOut = join(work, 'tsdb.out');
    const startTsdb = () => startIn(nsLog!, process.execPath, [...nodeScriptArgs('../helpers/tsdb-receiver', import.meta.url), LOG, String(TSDB_PORT), tsdbOut]);
    tsdb = startTsdb();
    const tsdbListening = async () => {
      for (let i = 0; i < 100; i++) {
        if ((await execIn(nsLog!, 'ss', ['-ltn'])).stdout.includes(`${LOG}:${TSDB_PORT}`)) return;
        await sleep(100);
      }
      throw new Error('the TSDB receiver did not start');
    };
    await tsdbListening();

    panel = await PanelProcess.start({ driver: 'linux', netns: nsGw, wireguard: 'userspace' });
    const api = panel.client;
    const wgIface = uniqueWgName();
    await api.ok('POST', '/wireguard', { name: 'tl', interface_name: wgIface, listen_port: 51820 + Math.floor(Math.random() * 10000), address: '10.82.0.1/24', external_ip: GW_P });
    const account = await api.ok<{ mangle: string }>('POST', '/account', { wg_name: 'tl', name: 'alice', allowed_IPs: PEER });
    const peerWg = uniqueWgName();
    await startWgClient(nsPeer, peerWg, await api.ok<string>('GET', '/account/alice/config_text'), '10.82.0.0/24');
    await execIn(nsPeer, 'ip', ['route', 'add', `${LOG}/32`, 'dev', peerWg]);
    await execIn(nsLog, 'ip', ['route', 'add', 'default', 'via', GW]);

    const config = await api.ok<Record<string, unknown>>('PUT', '/traffic_logging', {
      enabled: 1, enabled_remote_syslog: 1, remote_syslog_server: LOG, remote_syslog_server_port: 514,
      enabled_tsdb: 1, tsdb_url: `http://${LOG}:${TSDB_PORT}`, tsdb_token: 'sys-token-42', tsdb_bucket: 'flows', tsdb_organization: 'acme',
      new: 1, established: 1, related: 1, invalid: 1, untracked: 1, interface_in: 1, interface_out: 1, len: 1, tos: 1, mark: 1,
    });
    assert.equal(config.tsdb_token, '********');
    const save = (await execIn(nsGw, 'iptables-save', ['-t', 'mangle'])).stdout;
    assert.match(save, /^-A FORWARD -j VPNHOST-LOG$/m);
    assert.match(save, /^-A INPUT -j VPNHOST-LOG$/m);
    assert.equal(save.split('\n').filter((l) => l.includes('-j NFLOG')).length, 5, 'one NFLOG rule per selected state');

    // NEW (+ TOS, length): pings with TOS 0x10 from the peer through the tunnel to the log host (ulogd starts
    // asynchronously after the PUT: ping until the first line arrives).
    const byState = (state: string, more: (p: Record<string, string>) => boolean = () => true) =>
      readLogged(out).find((l) => l.p.state === state && l.p.account === 'alice' && more(l.p));
    for (let i = 0; i < 20 && !byState('new', (p) => p.proto === 'icmp'); i++) {
      await execIn(nsPeer, 'ping', ['-c', '1', '-W', '1', '-Q', '0x10', LOG], { allowFailure: true });
      await sleep(300);
    }
    const ping = await waitFor('an RFC 5424 line of the ping in rsyslogd\'s file', () => byState('new', (p) => p.proto === 'icmp'));
    const mark = String(TUNNEL_MARK + Number(account.mangle));
    assert.equal(ping.sd, `[flow@32473 account="alice" address="${PEER}" state="new" direction="out" proto="icmp" src="${PEER}" dst="${LOG}" ` +
      `in="${wgIface}" out="${toLog.a}" len="84" tos="16" mark="${mark}"]`);
    assert.equal(ping.msg, `alice icmp ${PEER} -> ${LOG} new`);

    // NEW and ESTABLISHED once each: one TCP connection (SYN, then the handshake's ACK) to the TSDB receiver's port.
    await execIn(nsPeer, 'python3', ['-c', PY_TCP, LOG, String(TSDB_PORT)]);
    const syn = await waitFor('the TCP NEW line', () => byState('new', (p) => p.proto === 'tcp' && p.dport === String(TSDB_PORT)));
    const ack = await waitFor('the TCP ESTABLISHED line', () => byState('established', (p) => p.proto === 'tcp' && p.dport === String(TSDB_PORT)));
    assert.equal(syn.p.sport, ack.p.sport);
    assert.equal(syn.p.len, '60', 'a SYN with options: 20 + 40 bytes');
    assert.equal(ack.p.len, '52', 'the ACK: 20 + 32 bytes (timestamps)');
    assert.equal(ack.p.out, toLog.a);

    // RELATED: the gateway probes a closed UDP port of the peer; the peer's ICMP port unreachable comes back in.
    await execIn(nsGw, 'python3', ['-c', PY_UDP, GW_TUNNEL, PEER, '7778']);
    const related = await waitFor('the RELATED line', () => byState('related'));
    assert.deepEqual([related.p.proto, related.p.src, related.p.dst, related.p.in, related.p.out], ['icmp', PEER, GW_TUNNEL, wgIface, undefined]);
    assert.equal(related.p.len, '57', 'ICMP error: 20 + 8 + the 29-byte probe it quotes');

    // INVALID: a TCP segment with SYN+FIN (no valid TCP state) crafted with a raw socket in the peer's namespace.
    await execIn(nsPeer, 'python3', ['-c', PY_SYNFIN, PEER, LOG, '80']);
    const invalid = await waitFor('the INVALID line', () => byState('invalid'));
    assert.deepEqual([invalid.p.proto, invalid.p.dport, invalid.p.len, invalid.p.mark], ['tcp', '80', '40', mark]);

    // UNTRACKED: a raw-table NOTRACK rule for one UDP port (the test's own rule in its namespace).
    await execIn(nsGw, 'iptables', ['-t', 'raw', '-A', 'PREROUTING', '-i', wgIface, '-p', 'udp', '--dport', '7777', '-j', 'NOTRACK']);
    await execIn(nsPeer, 'python3', ['-c', PY_UDP, PEER, LOG, '7777']);
    const untracked = await waitFor('the UNTRACKED line', () => byState('untracked'));
    assert.deepEqual([untracked.p.proto, untracked.p.dport, untracked.p.len, untracked.p.out], ['udp', '7777', '29', toLog.a]);

    const write = await waitFor('a TSDB write of the ping', () => existsSync(tsdbOut) && readFileSync(tsdbOut, 'utf8').trim().split('\n')
      .map((l) => JSON.parse(l) as { url: string; auth: string; body: string }).find((w) => w.body.includes('proto=icmp,state=new')));
    assert.equal(write.auth, 'Token sys-token-42');
    assert.match(write.url, /^\/api\/v2\/write\?org=acme&bucket=flows&precision=ms$/);
    const point = write.body.split('\n').find((l) => l.includes('proto=icmp,state=new'))!;
    assert.match(point, new RegExp(`^vpn_flow,account=alice,address=10\\.82\\.0\\.2,direction=out,in=${wgIface},out=${toLog.a},proto=icmp,state=new ` +
      `count=1i,dst="10\\.197\\.0\\.2",len=84i,mark=${mark}i,src="10\\.82\\.0\\.2",tos=16i \\d{13}$`));

    // TSDB down: connections keep coming, the API answers, syslog still flows, the TSDB backlog waits.
    tsdb.kill('SIGKILL');
    await tsdb;
    tsdb = null;
    for (let i = 0; i < 5; i++) await execIn(nsPeer, 'ping', ['-c', '1', '-W', '1', GW_TUNNEL], { allowFailure: true });
    // The API answers with the TSDB down (that it never waits on a receiver is shown without a clock in
    // test/integration/traffic-logging/traffic-logging-pipeline.test.ts, with a send held open).
    for (let i = 0; i < 10; i++) await api.ok('GET', '/traffic_logging');
    await waitFor('syslog keeps flowing', () => readLogged(out).filter((l) => l.p.dst === GW_TUNNEL && l.p.state === 'new').length >= 5);
    // Back up: the waiting points arrive by themselves.
    tsdb = startTsdb();
    await tsdbListening();
    await waitFor('the backlog sent after the TSDB came back', () => existsSync(tsdbOut) && readFileSync(tsdbOut, 'utf8').split(`dst=\\"${GW_TUNNEL}\\"`).length - 1 >= 5, 20_000);

    // Supervised: ulogd killed -9 is started again and logging goes on.
    const ulogdPids = async () => (await namespacePids(nsGw)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ulogd';
      } catch {
        return false;
      }
    });
    const [first] = await ulogdPids();
    assert.ok(first, 'ulogd runs in the panel\'s namespace');
    process.kill(first, 'SIGKILL');
    let second: number | undefined;
    for (let i = 0; i < 50 && !second; i++) {
      second = (await ulogdPids()).find((pid) => pid !== first);
      if (!second) await sleep(100);
    }
    assert.ok(second, 'ulogd was started again');
    const pingedAfter = async (dst: string, what: string) => {
      const before = readLogged(out).filter((l) => l.p.dst === dst).length;
      for (let i = 0; i < 20 && readLogged(out).filter((l) => l.p.dst === dst).length === before; i++) {
        await execIn(nsPeer!, 'ping', ['-c', '1', '-W', '1', dst], { allowFailure: true });
        await sleep(300);
      }
      await waitFor(what, () => readLogged(out).filter((l) => l.p.dst === dst).length > before);
    };
    await pingedAfter(LOG, 'a line after ulogd was restarted');

    // Reconcile (PUT /system/reload) writes the rules again after someone flushed them.
    const nflogRules = async () => (await execIn(nsGw, 'iptables-save', ['-t', 'mangle'])).stdout.split('\n').filter((l) => l.includes('-j NFLOG')).length;
    await execIn(nsGw, 'iptables', ['-t', 'mangle', '-F', 'VPNHOST-LOG-STATE']);
    await api.ok('PUT', '/system/reload');
    for (let i = 0; i < 100 && (await nflogRules()) !== 5; i++) await sleep(100);
    assert.equal(await nflogRules(), 5, 'reconcile re-created the NFLOG rules');

    // Boot with logging enabled: a panel killed -9 (its ulogd left behind, the chains removed meanwhile) comes back
    // with the chains installed and its own ulogd reading them.
    await panel.kill('SIGKILL');
    for (const hook of ['FORWARD', 'INPUT']) await execIn(nsGw, 'iptables', ['-t', 'mangle', '-D', hook, '-j', 'VPNHOST-LOG']);
    for (const op of ['-F', '-X']) for (const chain of ['VPNHOST-LOG', 'VPNHOST-LOG-STATE']) await execIn(nsGw, 'iptables', ['-t', 'mangle', op, chain]);
    await panel.restart();
    for (let i = 0; i < 100 && (await nflogRules()) !== 5; i++) await sleep(100);
    assert.equal(await nflogRules(), 5, 'boot installed the NFLOG rules');
    await pingedAfter(LOG, 'a line after the panel restarted');
    assert.equal((await ulogdPids()).length, 1, 'the stale ulogd was stopped: one ulogd');

    // Disabled: the chains and their hooks are gone.
    await panel.client.ok('PUT', '/traffic_logging', { enabled: 0 });
    assert.doesNotMatch((await execIn(nsGw, 'iptables-save', ['-t', 'mangle'])).stdout, /VPNHOST-LOG/);
  } finally {
    await panel?.cleanup().catch(() => undefined);
    tsdb?.kill('SIGKILL');
    rsyslog?.kill('SIGTERM');
    await Promise.allSettled([tsdb, rsyslog]);
    if (nsPeer) await destroyNamespace(nsPeer);
    if (nsLog) await destroyNamespace(nsLog);
    await destroyNamespace(nsGw);
    rmSync(work, { recursive: true, force: true });
  }
});
