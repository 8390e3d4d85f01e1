// Bench (not a test): the cost of the IKEv2 clients' policy (the shaping tree on charon's TUN) at N limited accounts.
//
// Run (root, strongSwan installed): `node --import tsx test/bench/panel-ikev2-policy.ts [--accounts 2000] [--rounds 15]`.
// In process through inject(), the whole linux data plane inside a network namespace the bench creates (wireguard-go,
// iptables/ipset, tc, charon-systemd with kernel-libipsec). N accounts, each limited to 10/10 Mbit/s, are written
// straight through the repository on a server with ikev2=1. Printed: the reconcile that builds their WireGuard tree
// (IKEv2 off), `PUT /ikev2 enabled=1` (charon start, N EAP secrets, pools, conns, and the TUN tree of N classes per
// direction), a reconcile of that right state (reads only), a reconcile after the TUN tree was deleted (the rebuild
// after a charon restart), and, alternating, one account's rate change on a server with ikev2=0 (one `tc -batch`)
// and on the ikev2=1 server (one on wgN, one on ipsec0) — medians and their ratio. iptables costs nothing per account:
// the TUN dispatch is one line per server, the marks are the server's existing ipset entries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { fixedRouteProbe } from '../../panel/dataplane/default-route.ts';
import { CharonIpsec } from '../../panel/dataplane/ipsec/linux/charon-ipsec.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName } from '../helpers/netns.ts';
import { median, fmt } from './bench-math.ts';
import { fillAccounts } from './fill-accounts.ts';

const { values: args } = parseArgs({
  options: { accounts: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '15' } },
  strict: true,
});
const N = Number(args.accounts);
const ROUNDS = Number(args.rounds);

async function main(): Promise<void> {
  const ns = await createNamespace('vhbpol');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-ikepol-'));
  const runner = new ExecaRunner({ netns: ns, timeoutMs: 600_000 });
  const ipsec = new CharonIpsec({ runner, dir: join(dir, 'ipsec'), libipsec: true, startTimeoutMs: 60_000 });
  const dataplane = { ...(await createDataplane({ kind: 'linux', dataDir: dir, runner, apiPort: null, wireguard: 'userspace' })), ipsec };
  const now = new Date();
  const p = await makePanel({ licenseAccounts: N + 2 * ROUNDS + 10, clock: { now: () => now }, deps: { dataplane, routeProbe: fixedRouteProbe() } });
  const timed = async (what: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    const ms = performance.now() - t;
    console.log(`${what}: ${fmt(ms)} ms`);
    return ms;
  };
  // Peer classes only: the classes 1:<M> are the /24 groups' (one child HTB per /24).
  const classes = async (dev: string) => ((await execIn(ns, 'tc', ['class', 'show', 'dev', dev])).stdout.match(/^class htb (?!1:)/gm) ?? []).length;
  try {
    await p.ok('POST', '/wireguard', { name: 'ike', address: '10.66.0.1/16', ikev2: '1', external_ip: '192.0.2.1', interface_name: uniqueWgName() });
    await p.ok('POST', '/wireguard', { name: 'plain', address: '10.201.0.1/16', ikev2: '0', external_ip: '192.0.2.1', interface_name: uniqueWgName() });
    fillAccounts(p, 'ike', N, { firstOctets: [10, 66], keyByte: 9, limitMbit: 10 });
    for (let r = 0; r < ROUNDS; r++) await p.ok('POST', '/account', { wg_name: 'plain', allowed_IPs: `10.201.1.${10 + r}`, name: `Plain_${r}`, b_download: '10', b_upload: '10' });
    await p.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Bench CA', ca_organization: 'vpnhost' });
    await p.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: 'vpn.bench.test', server_ip: '192.0.2.1', server_common_name: 'vpn.bench.test', server_organization: 'vpnhost' });

    await timed(`reconcile, IKEv2 off (WireGuard tree of ${N} limited peers built)`, () => p.ok('PUT', '/system/reload'));
    await timed(`PUT /ikev2 enabled=1 (charon start, ${N} EAP secrets/pools/conns, TUN tree built)`, () => p.ok('PUT', '/ikev2', { enabled: '1' }));
    console.log(`HTB classes: ipsec0 ${await classes('ipsec0')}, ifb-ipsec0 ${await classes('ifb-ipsec0')} (N = ${N})`);
    const right = await timed('reconcile of the right state, IKEv2 on (reads only)', () => p.ok('PUT', '/system/reload'));
    await execIn(ns, 'tc', ['qdisc', 'del', 'dev', 'ipsec0', 'root']);
    await execIn(ns, 'tc', ['qdisc', 'del', 'dev', 'ipsec0', 'ingress']);
    await execIn(ns, 'ip', ['link', 'del', 'ifb-ipsec0']);
    const rebuilt = await timed('reconcile after the TUN tree was deleted (as after a charon restart)', () => p.ok('PUT', '/system/reload'));
    console.log(`TUN tree rebuild of ${N} peers: ~${fmt(rebuilt - right)} ms`);
    const back = await classes('ipsec0');
    if (back !== N) throw new Error(`the reconcile left ${back} classes on ipsec0, not ${N}`);

    const off: number[] = [];
    const on: number[] = [];
    const change = async (name: string, mbit: number) => {
      const t = performance.now();
      await p.ok('PUT', `/account/${name}`, { b_download: String(mbit), b_upload: String(mbit) });
      return performance.now() - t;
    };
    for (let r = 0; r < ROUNDS; r++) {
      off.push(await change(`Plain_${r}`, 20 + r));
      on.push(await change(`Account_${1 + r * Math.floor(N / ROUNDS)}`, 20 + r));
    }
    const mOff = median(off);
    const mOn = median(on);
    console.log(`PUT /account rate change, ikev2=0 server: median ${fmt(mOff)} ms; ikev2=1 server (wgN + ipsec0): median ${fmt(mOn)} ms; ratio ${(mOn / mOff).toFixed(2)}x`);
  } finally {
    await p.close();
    await ipsec.stop().catch(() => undefined);
    await dataplane.close().catch(() => undefined);
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
