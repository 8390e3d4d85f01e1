// Concurrent POST /account on a real panel (linux data plane, group commit): each answer after its own change, and a SIGKILL mid-burst loses nothing.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { test } from 'node:test';
import { GROUP_MAJORS } from '../../panel/dataplane/render/tc-layout.ts';
import { E } from '../../shared/wire/error-texts.ts';
import { destroyNamespace, execIn, uniqueWgName } from '../helpers/netns.ts';
import { startLinuxPanel, waitBooted } from '../helpers/linux-panel.ts';
import { PanelProcess, type PanelAnswer } from '../helpers/panel-process.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { peerClasses } from '../helpers/tc-state.ts';

const BURST = 200;
const NETWORK = (10 << 24) | (67 << 16);

interface WireAccount {
  name: string;
  allowed_IPs: string;
  public_key: string;
  mangle: string;
  b_download: string;
  b_upload: string;
}

/** Host `i` (0-based) of 10.67.0.0/23 from .2 on. */
const hostOf = (i: number) => i + 2;
const ipOf = (host: number) => `10.67.${host >> 8}.${host & 255}`;
const classOf = (host: number) => `${GROUP_MAJORS[host >> 8].toString(16)}:${host.toString(16)}`;
const form = (prefix: string, i: number, host: number) => ({
  wg_name: 'burst', name: `${prefix}${i}`, allowed_IPs: ipOf(host), b_download: String(5 + (i % 7)), b_upload: '3',
});

/** The store (GET /account) against the kernel: WireGuard peers, marks in the ipset, classes both ways; all equal. */
async function assertNoDrift(panel: PanelProcess, ns: string, iface: string): Promise<WireAccount[]> {
  const accounts = await panel.client.ok<WireAccount[]>('GET', '/account');
  const peers = new Map<string, string>();
  for (const line of (await execIn(ns, 'wg', ['show', iface, 'allowed-ips'])).stdout.split('\n').filter(Boolean)) {
    const [key, ips] = line.split('\t');
    peers.set(key, ips.split(' ').find((ip) => ip.includes('.'))!);
  }
  assert.deepEqual(peers, new Map(accounts.map((a) => [a.public_key, `${a.allowed_IPs}/32`])), 'WireGuard peers = accounts');
  const marks = new Map<string, number>();
  for (const m of (await execIn(ns, 'ipset', ['save', `vpnhost-${iface}-4`])).stdout.matchAll(/^add \S+ (\S+) .*skbmark (0x[0-9a-f]+)/gm)) marks.set(m[1], Number(m[2]));
  assert.deepEqual(marks, new Map(accounts.map((a) => [a.allowed_IPs, Number(a.mangle)])), 'marks = accounts');
  const host = (a: WireAccount) => ((a.allowed_IPs.split('.').map(Number).reduce((n, o) => n * 256 + o, 0) - NETWORK) >>> 0);
  assert.deepEqual(await peerClasses(ns, iface), new Map(accounts.map((a) => [classOf(host(a)), `${a.b_download}Mbit`])), 'download classes');
  assert.deepEqual(await peerClasses(ns, `ifb-${iface}`), new Map(accounts.map((a) => [classOf(host(a)), `${a.b_upload}Mbit`])), 'upload classes');
  return accounts;
}

test(`${BURST} POST /account at once: each answered with its peer, mark and class in; a SIGKILL mid-burst loses none, no drift`, async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'iptables', 'ipset', 'tc'], { root: true })) return;
  const { ns, panel } = await startLinuxPanel('vhcc', { connections: BURST, licenseAccounts: 1000 });
  try {
    const api = panel.client;
    const iface = uniqueWgName();
    await api.ok('POST', '/wireguard', {
      name: 'burst', interface_name: iface, listen_port: 51820 + randomInt(10000), address: '10.67.0.1/23', external_ip: '192.0.2.1',
      ipv6: '1', address_ipv6: 'fd67::1/64',
    });

    // 1. A burst: every answer comes once its peer, mark and class are in (the class, applied last, is checked).
    const late: string[] = [];
    await Promise.all(Array.from({ length: BURST }, async (_, i) => {
      const answer = await api.request('POST', '/account', form('c', i, hostOf(i)));
      assert.equal(answer.body.status, 'success', `c${i}: ${answer.body.error}`);
      const cls = await execIn(ns, 'tc', ['class', 'show', 'dev', `ifb-${iface}`, 'classid', classOf(hostOf(i))]);
      if (!cls.stdout.includes('class htb')) late.push(`c${i}`);
    }));
    assert.deepEqual(late, [], 'answered before its class was in the kernel');
    assert.equal((await assertNoDrift(panel, ns, iface)).length, BURST);

    // 2. Another burst, 16 in flight (so it spans several batches), and a SIGKILL once a fifth of it is answered:
    // nothing answered is lost, nothing drifts.
    const answered = new Set<string>();
    let killed: Promise<void> | null = null;
    const second = Array.from({ length: BURST }, (_, i) => form('k', i, hostOf(BURST + i)));
    const queue = [...second];
    const worker = async () => {
      for (let f = queue.shift(); f && !killed; f = queue.shift()) {
        const answer: PanelAnswer | null = await api.request('POST', '/account', f).catch(() => null);
        if (answer?.body.status === 'success') answered.add(f.name);
        if (answered.size >= BURST / 5) killed ??= panel.kill('SIGKILL');
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await killed;
    assert.ok(answered.size >= BURST / 5 && answered.size < BURST, `answered before the kill: ${answered.size}`);
    await panel.restart();
    await waitBooted(panel);
    const kept = await assertNoDrift(panel, ns, iface);
    const names = new Set(kept.map((a) => a.name));
    assert.deepEqual([...answered].filter((n) => !names.has(n)), [], 'answered accounts lost');
    t.diagnostic(`answered before the kill: ${answered.size}, committed: ${kept.length - BURST}`);

    // 3. The client sends the unanswered ones again: each is created now, or was committed before the kill.
    for (const f of second.filter((x) => !answered.has(x.name))) {
      const answer = await api.request('POST', '/account', f);
      if (answer.body.status !== 'success') assert.equal(answer.body.error, E.NAME_IN_USE, f.name);
      assert.equal(names.has(f.name), answer.body.status !== 'success', `${f.name}: committed before the kill iff refused now`);
    }
    assert.equal((await assertNoDrift(panel, ns, iface)).length, 2 * BURST);
  } finally {
    await panel.cleanup();
    await destroyNamespace(ns);
  }
});
