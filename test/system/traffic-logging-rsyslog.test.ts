// Traffic logging for real: a panel (linux data plane) in a namespace records connections from conntrack events; a
// real rsyslogd in a second namespace receives the RFC 5424 lines over UDP and writes them to a file; a TSDB
// receiver there checks the line protocol the client library sends; stopping it keeps the API fast and the backlog
// (the points wait in the backlog, far below its cap of 10,000) and the points arrive once it is back.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';

const GW = '10.197.0.1';
const LOG = '10.197.0.2';
const PEER = '10.82.0.2';
const TSDB_PORT = 18086;

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
  const proc = execa('ip', ['netns', 'exec', ns, file, ...args], { reject: false, stdin: 'ignore', buffer: false });
  return proc;
}

test('traffic logging: conntrack events → rsyslogd (RFC 5424 over UDP) and the TSDB write API; a receiver down', async (t) => {
  if (!requireTools(t, ['rsyslogd', 'conntrack', 'stdbuf', 'wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'ping'], { root: true })) return;
  const work = mkdtempSync(join(tmpdir(), 'vpnhost-tl-sys-'));
  const nsGw = await createNamespace('vhtg');
  let nsLog: string | null = null;
  let panel: PanelProcess | null = null;
  let rsyslog: ResultPromise | null = null;
  let tsdb: ResultPromise | null = null;
  try {
    nsLog = await createNamespace('vhtl');
    await vethPair(nsGw, nsLog, `${GW}/30`, `${LOG}/30`);
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
    const startTsdb = () => startIn(nsLog!, process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../helpers/tsdb-receiver.ts'), LOG, String(TSDB_PORT), tsdbOut]);
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
    await api.ok('POST', '/wireguard', { name: 'tl', interface_name: uniqueWgName(), listen_port: 51820 + Math.floor(Math.random() * 10000), address: '10.82.0.1/24', external_ip: GW });
    await api.ok('POST', '/account', { wg_name: 'tl', name: 'alice', allowed_IPs: PEER });
    const config = await api.ok<Record<string, unknown>>('PUT', '/traffic_logging', {
      enabled: 1, enabled_remote_syslog: 1, remote_syslog_server: LOG, remote_syslog_server_port: 514,
      enabled_tsdb: 1, tsdb_url: `http://${LOG}:${TSDB_PORT}`, tsdb_token: 'sys-token-42', tsdb_bucket: 'flows', tsdb_organization: 'acme',
      interface_in: 1,
    });
    assert.equal(config.tsdb_token, '********');

    // The peer's address as a local source in the gateway namespace: its connections are the kernel's own events.
    await execIn(nsGw, 'ip', ['addr', 'add', `${PEER}/32`, 'dev', 'lo']);
    await execIn(nsLog, 'ip', ['route', 'add', `${PEER}/32`, 'via', GW]);
    // conntrack -E subscribes asynchronously after the PUT: ping until the first line arrives (a loaded CI host).
    const firstLine = () => existsSync(out) && readFileSync(out, 'utf8').split('\n').find((l) => l.includes('alice'));
    for (let i = 0; i < 20 && !firstLine(); i++) {
      await execIn(nsGw, 'ping', ['-c', '1', '-W', '1', '-I', PEER, LOG]);
      await sleep(500);
    }
    const line = await waitFor('an RFC 5424 line in rsyslogd\'s file', firstLine);
    const [app, msgid, sd, msg] = line.split('|');
    assert.equal(app, 'vpnhost-panel');
    assert.equal(msgid, 'flow');
    assert.match(sd, /^\[flow@32473 account="alice" address="10\.82\.0\.2" state="new" direction="out" proto="icmp" src="10\.82\.0\.2" dst="10\.197\.0\.2" in="wg\d+"\]$/);
    assert.equal(msg, 'alice icmp 10.82.0.2 -> 10.197.0.2 new');

    const write = await waitFor('a TSDB write', () => existsSync(tsdbOut) && readFileSync(tsdbOut, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; auth: string; body: string }).find((w) => w.body.includes('account=alice')));
    assert.equal(write.auth, 'Token sys-token-42');
    assert.match(write.url, /^\/api\/v2\/write\?org=acme&bucket=flows&precision=ms$/);
    assert.match(write.body.trim(), /^vpn_flow,account=alice,address=10\.82\.0\.2,direction=out,in=wg\d+,proto=icmp,state=new count=1i,dst="10\.197\.0\.2",src="10\.82\.0\.2" \d{13}$/);

    // TSDB down: connections keep coming, the API answers fast, syslog still flows, the TSDB backlog waits.
    tsdb.kill('SIGKILL');
    await tsdb;
    tsdb = null;
    for (let i = 0; i < 5; i++) await execIn(nsGw, 'ping', ['-c', '1', '-W', '1', '-I', PEER, GW]);
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) await api.ok('GET', '/traffic_logging');
    assert.ok(performance.now() - t0 < 2_000, 'GET /traffic_logging stays fast with the TSDB down');
    await waitFor('syslog keeps flowing', () => readFileSync(out, 'utf8').split('\n').filter((l) => l.includes(`dst="${GW}"`)).length >= 5);
    // Back up: the waiting points arrive by themselves.
    tsdb = startTsdb();
    await tsdbListening();
    await waitFor('the backlog sent after the TSDB came back', () => existsSync(tsdbOut) && readFileSync(tsdbOut, 'utf8').split(`dst=\\"${GW}\\"`).length - 1 >= 5, 20_000);
  } finally {
    await panel?.cleanup().catch(() => undefined);
    tsdb?.kill('SIGKILL');
    rsyslog?.kill('SIGTERM');
    await Promise.allSettled([tsdb, rsyslog]);
    if (nsLog) await destroyNamespace(nsLog);
    await destroyNamespace(nsGw);
    rmSync(work, { recursive: true, force: true });
  }
});
