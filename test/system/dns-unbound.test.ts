// Real unbound started by a panel (linux driver) in namespace A; a WireGuard client in B resolves through the
// tunnel, answers come from a tiny authoritative server (node:dgram) in C; ACL, TTL cap, bad input, crash, disable.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { execa, type ResultPromise } from 'execa';
import type { DnsStatus } from '../../panel/schemas/dns.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { processAlive } from '../helpers/process-alive.ts';
import { requireTools } from '../helpers/require-tools.ts';

const SERVER_IP = '10.77.0.1';
const A_VETH = '10.199.0.1';
const B_VETH = '10.199.0.2';
const AC_A = '10.198.0.1';
const AUTH_IP = '10.198.0.2';
const ANSWER = '192.0.2.10';

/** A DNS server answering every A query with ANSWER (TTL 86400, authoritative), NODATA for other types. */
const AUTH_JS = `
const dgram = require('node:dgram');
const sock = dgram.createSocket('udp4');
sock.on('message', (q, rinfo) => {
  let i = 12;
  while (q[i] !== 0) i += q[i] + 1;
  const qtype = q.readUInt16BE(i + 1);
  const question = q.subarray(12, i + 5);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8580 | (q.readUInt16BE(2) & 0x0100), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(qtype === 1 ? 1 : 0, 6);
  const answer = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 1, 0x51, 0x80, 0, 4, ${ANSWER.split('.').join(', ')}]);
  sock.send(Buffer.concat(qtype === 1 ? [header, question, answer] : [header, question]), rinfo.port, rinfo.address);
});
sock.bind(53, '${AUTH_IP}', () => process.stdout.write('auth ready\\n'));
`;

/** `dig` in `ns`: the answer section's records as [name, ttl, type, data] and the status (NOERROR, REFUSED...). */
async function dig(ns: string, server: string, name: string): Promise<{ status: string; answers: string[][] }> {
  const out = (await execIn(ns, 'dig', ['+tries=1', '+time=2', '+noall', '+comments', '+answer', `@${server}`, name, 'A'], { allowFailure: true })).stdout;
  const status = /status: (\w+)/.exec(out)?.[1] ?? 'NO ANSWER';
  const answers = out.split('\n').filter((l) => l && !l.startsWith(';')).map((l) => l.trim().split(/\s+/)).map((f) => [f[0], f[1], f[3], f[4]]);
  return { status, answers };
}

async function eventually<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, attempts = 60): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < attempts; i++) {
    last = await probe();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`not reached: ${what} (last: ${JSON.stringify(last)})`);
}

test('panel-run unbound resolves for WireGuard peers through the tunnel, refuses outsiders, caps TTLs, survives bad input and crashes, stops when disabled', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'dig', 'unbound', 'unbound-control', 'unbound-checkconf', 'unbound-control-setup'], { root: true })) return;
  const namespaces: string[] = [];
  let panel: PanelProcess | null = null;
  let auth: ResultPromise | null = null;
  const clientDir = mkdtempSync(join(tmpdir(), 'vpnhost-dns-client-'));
  try {
    const nsA = await createNamespace('vhna');
    namespaces.push(nsA);
    const nsB = await createNamespace('vhnb');
    namespaces.push(nsB);
    const nsC = await createNamespace('vhnc');
    namespaces.push(nsC);
    const ab = await vethPair(nsA, nsB, `${A_VETH}/30`, `${B_VETH}/30`);
    await vethPair(nsA, nsC, `${AC_A}/30`, `${AUTH_IP}/30`);
    auth = execa('ip', ['netns', 'exec', nsC, process.execPath, '-e', AUTH_JS], { reject: false, stdin: 'ignore' });
    await new Promise<void>((resolve, reject) => {
      auth!.stdout!.on('data', (d: Buffer) => String(d).includes('auth ready') && resolve());
      void auth!.then((r) => reject(new Error(`authoritative server exited: ${r.stderr}`)));
    });

    // the watchdog is off at first, so the crash stays visible until PUT /system/reload (turned on further down)
    panel = await PanelProcess.start({ driver: 'linux', netns: nsA, wireguard: 'userspace', externalInterface: ab.a, licenseAccounts: 10,
      env: { VPNHOST_PANEL_WATCHDOG_SECONDS: '0' } });
    const api = panel.client;
    const iface = uniqueWgName();
    const port = 51820 + Math.floor(Math.random() * 10000);
    await api.ok('POST', '/wireguard', { name: 'dns_wg', interface_name: iface, listen_port: port, address: `${SERVER_IP}/24`, external_ip: A_VETH, allowed_ips: '10.77.0.0/24' });
    await api.ok('POST', '/account', { wg_name: 'dns_wg', allowed_IPs: '10.77.0.2', name: 'alice' });

    const on = await api.ok<DnsStatus>('PUT', '/dns', { enabled: 1, forwarders_1: AUTH_IP, forwarders_2: '', max_cache_ttl: 3600 });
    assert.equal(on.enabled, true);
    assert.match(on.pid, /^\d+$/);
    assert.match(on.dnsd, /^\d+\.\d+\.\d+/);
    assert.deepEqual(on.acl, ['10.77.0.0/24']);
    const confPath = join(panel.dataDir, 'unbound', 'unbound.conf');
    assert.match(readFileSync(confPath, 'utf8'), new RegExp(`interface: ${SERVER_IP.replace(/\./g, '\\.')}\\n`));

    // The client brings up exactly what config_text hands out; its DNS is the server's tunnel address.
    const text = await api.ok<string>('GET', '/account/alice/config_text');
    const value = (key: string) => new RegExp(`^${key}\\s*=\\s*(.+)$`, 'm').exec(text)?.[1].trim() ?? '';
    assert.equal(value('DNS'), SERVER_IP);
    const client = uniqueWgName();
    const confFile = join(clientDir, `${client}.conf`);
    writeFileSync(confFile, `[Interface]\nPrivateKey = ${value('PrivateKey')}\n\n[Peer]\nPublicKey = ${value('PublicKey')}\nAllowedIPs = ${value('AllowedIPs')}\nEndpoint = ${value('Endpoint')}\n`, { mode: 0o600 });
    await execIn(nsB, 'wireguard-go', [client]);
    await execIn(nsB, 'wg', ['setconf', client, confFile]);
    await execIn(nsB, 'ip', ['addr', 'add', value('Address'), 'dev', client]);
    await execIn(nsB, 'ip', ['link', 'set', client, 'up']);
    await execIn(nsB, 'ip', ['route', 'add', '10.77.0.0/24', 'dev', client]);

    await t.test('a peer resolves through the tunnel; the answer comes from the forwarder in C', async () => {
      const res = await eventually('answer through the tunnel', () => dig(nsB, value('DNS'), 'www.vpnhost-dns.net'), (r) => r.status === 'NOERROR');
      assert.deepEqual(res.answers.map((a) => [a[0], a[2], a[3]]), [['www.vpnhost-dns.net.', 'A', ANSWER]]);
      const ttl = Number(res.answers[0][1]);
      assert.ok(ttl <= 3600 && ttl > 60, `TTL ${ttl} capped at max_cache_ttl 3600 (the authority says 86400)`);
    });

    await t.test('a client outside the ACL is refused', async () => {
      await execIn(nsC, 'ip', ['route', 'add', `${SERVER_IP}/32`, 'via', AC_A]);
      const res = await dig(nsC, SERVER_IP, 'www.vpnhost-dns.net');
      assert.equal(res.status, 'REFUSED');
      assert.deepEqual(res.answers, []);
    });

    await t.test('max_cache_ttl is changed live (same pid) and caps the TTL the client sees', async () => {
      const before = await api.ok<DnsStatus>('GET', '/dns');
      const after = await api.ok<DnsStatus>('PUT', '/dns', { max_cache_ttl: 60 });
      assert.equal(after.pid, before.pid);
      assert.equal(after.max_cache_ttl, '60');
      const res = await dig(nsB, SERVER_IP, 'fresh.vpnhost-dns.net');
      assert.equal(res.status, 'NOERROR');
      const ttl = Number(res.answers[0]?.[1]);
      assert.ok(ttl > 0 && ttl <= 60, `TTL ${ttl} ≤ 60`);
    });

    await t.test('bad input answers the spec text and leaves the running unbound untouched (pid and config)', async () => {
      const before = await api.ok<DnsStatus>('GET', '/dns');
      const conf = readFileSync(confPath, 'utf8');
      for (const [form, text] of [
        [{ forwarders_1: 'resolver.example' }, 'Incorrect data in Forwarder1 parameters'],
        [{ forwarders_2: '1.1.1.1\n    interface: 0.0.0.0' }, 'Incorrect data in Forwarder2 parameters'],
        [{ max_cache_ttl: 3601 }, 'Incorrect value Max Cache TTL (should be 30 to 3600)'],
      ] as const) {
        const res = await api.request('PUT', '/dns', form);
        assert.equal(res.body.error, text);
      }
      assert.deepEqual(await api.ok<DnsStatus>('GET', '/dns'), before);
      assert.equal(readFileSync(confPath, 'utf8'), conf);
      assert.equal((await dig(nsB, SERVER_IP, 'www.vpnhost-dns.net')).status, 'NOERROR');
    });

    await t.test('a killed unbound is reported in /system/status and restarted by PUT /system/reload', async () => {
      const { pid } = await api.ok<DnsStatus>('GET', '/dns');
      process.kill(Number(pid), 'SIGKILL');
      const status = await eventually('crash reported', async () => (await api.ok<{ status: string }>('GET', '/system/status')).status, (s) => s !== 'OK');
      assert.match(status, new RegExp(`^Error: dns resolver not running: unbound \\(pid ${pid}\\) exited with signal SIGKILL$`));
      assert.equal((await api.ok<DnsStatus>('GET', '/dns')).pid, '');
      await api.ok('PUT', '/system/reload');
      assert.equal((await api.ok<{ status: string }>('GET', '/system/status')).status, 'OK');
      const again = await api.ok<DnsStatus>('GET', '/dns');
      assert.match(again.pid, /^\d+$/);
      assert.notEqual(again.pid, pid);
      assert.equal((await eventually('answers again', () => dig(nsB, SERVER_IP, 'again.vpnhost-dns.net'), (r) => r.status === 'NOERROR')).answers[0]?.[3], ANSWER);
    });

    await t.test('with the watchdog on, a killed unbound comes back by itself (new pid, answering again)', async () => {
      await panel!.restart({ env: { VPNHOST_PANEL_WATCHDOG_SECONDS: '1' } });
      // the boot reconcile (which would start unbound itself) is over before the kill: the restart is the watchdog's
      await eventually('boot reconcile done', async () => (await api.ok<{ status: string }>('GET', '/system/status')).status, (s) => s === 'OK');
      const { pid } = await eventually('adopted after the restart', () => api.ok<DnsStatus>('GET', '/dns'), (s) => /^\d+$/.test(s.pid));
      process.kill(Number(pid), 'SIGKILL');
      const back = await eventually('restarted by the watchdog', () => api.ok<DnsStatus>('GET', '/dns'), (s) => /^\d+$/.test(s.pid) && s.pid !== pid, 75);
      assert.equal(processAlive(Number(pid)), false);
      assert.equal(processAlive(Number(back.pid)), true);
      await eventually('status OK again', async () => (await api.ok<{ status: string }>('GET', '/system/status')).status, (s) => s === 'OK');
      assert.equal((await eventually('answers after the watchdog', () => dig(nsB, SERVER_IP, 'watchdog.vpnhost-dns.net'), (r) => r.status === 'NOERROR')).answers[0]?.[3], ANSWER);
    });

    // (Adoption of a running unbound by a restarted panel is in the linux DNS contract: dns-unbound-contract.test.ts.)
    await t.test('disabling stops unbound and the peers get the server dns_1/dns_2 again', async () => {
      const { pid } = await api.ok<DnsStatus>('GET', '/dns');
      const off = await api.ok<DnsStatus>('PUT', '/dns', { enabled: 0 });
      assert.equal(off.pid, '');
      assert.equal(processAlive(Number(pid)), false, 'unbound is gone');
      assert.notEqual(/^DNS\s*=\s*(.+)$/m.exec(await api.ok<string>('GET', '/account/alice/config_text'))?.[1].trim(), SERVER_IP);
    });
  } finally {
    auth?.kill('SIGKILL');
    await panel?.cleanup();
    for (const ns of namespaces) await destroyNamespace(ns);
    rmSync(clientDir, { recursive: true, force: true });
  }
});
