// Bench (not a test): one account create with IKEv2 on (N accounts loaded in a real charon) vs off, charon's memory.
//
// Run (root, strongSwan installed): `node --import tsx test/bench/panel-ikev2.ts [--accounts 10000] [--rounds 15] [--per-account]`.
// In process through inject(), the whole linux data plane inside a network namespace the bench creates (wireguard-go,
// iptables/ipset, tc, and charon-systemd with kernel-libipsec); `--simulated` keeps WireGuard, firewall and shaping as
// twins (then the floor is the panel's own work only and the ratio shows what IKEv2 adds to that). N accounts are written straight through the repository on a
// server with ikev2=1, then IKEv2 is enabled (one full load of N connections, pools and EAP secrets). Then, alternating,
// one POST /account on a server with ikev2=0 (off) and one on the ikev2=1 server (on: + load-shared, load-pool,
// load-conn over vici; with identity leases, the default, load-shared only); medians and the ratio (target ≤ 2x) are
// printed, with charon's VmRSS before and after the load.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDataplane, createSimulatedDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { fixedRouteProbe } from '../../panel/dataplane/default-route.ts';
import { CharonIpsec } from '../../panel/dataplane/ipsec/linux/charon-ipsec.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { SimulatedDriver } from '../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { createNamespace, destroyNamespace, hostLink, uniqueWgName } from '../helpers/netns.ts';
import { median, fmt } from './bench-math.ts';
import { fillAccounts } from './fill-accounts.ts';

const { values: args } = parseArgs({
  options: {
    accounts: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '15' }, simulated: { type: 'boolean', default: false },
    'per-account': { type: 'boolean', default: false },
  },
  strict: true,
});
const N = Number(args.accounts);
const ROUNDS = Number(args.rounds);

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

async function main(): Promise<void> {
  const ns = await createNamespace('vhbench');
  const ipsecDir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-ipsec-'));
  const runner = new ExecaRunner({ netns: ns, timeoutMs: 600_000 });
  // the default: one shared connection, addresses from the identity lease responder (in this namespace, reached by
  // charon over a veth); --per-account: one connection and pool per account (identity leases off)
  const leases = args['per-account'] ? {} : { identityLeases: { address: (await hostLink(ns)).hostIp } };
  const ipsec = new CharonIpsec({ runner, dir: join(ipsecDir, 'ipsec'), libipsec: true, startTimeoutMs: 60_000, ...leases });
  const dataplane = args.simulated
    ? createSimulatedDataplane({ wireguard: new SimulatedDriver(), ipsec })
    : { ...(await createDataplane({ kind: 'linux', dataDir: ipsecDir, runner, apiPort: null, wireguard: 'userspace' })), ipsec };
  console.log(`data plane: ${args.simulated ? 'simulated twins + real charon' : 'linux (wireguard-go, iptables, tc, charon) in a namespace'}; ` +
    `IKEv2: ${args['per-account'] ? 'one connection and pool per account' : 'one shared connection + identity leases'}`);
  const now = new Date();
  const p = await makePanel({ licenseAccounts: N + 2 * ROUNDS + 10, clock: { now: () => now }, deps: { dataplane, routeProbe: fixedRouteProbe() } });
  try {
    await p.ok('POST', '/wireguard', { name: 'ike', address: '10.64.0.1/10', ikev2: '1', external_ip: '192.0.2.1', interface_name: uniqueWgName() });
    await p.ok('POST', '/wireguard', { name: 'plain', address: '10.200.0.1/16', ikev2: '0', external_ip: '192.0.2.1', interface_name: uniqueWgName() });
    let t = performance.now();
    fillAccounts(p, 'ike', N, { firstOctets: [10, 64], keyByte: 7 });
    console.log(`fill: ${N} accounts in ${fmt(performance.now() - t)} ms`);
    await p.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Bench CA', ca_organization: 'vpnhost' });
    await p.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: 'vpn.bench.test', server_ip: '192.0.2.1', server_common_name: 'vpn.bench.test', server_organization: 'vpnhost' });
    // charon with the probe connection only, then with every account
    await p.db.prepare("UPDATE wireguard_servers SET ikev2 = 0 WHERE name = 'ike'").run();
    t = performance.now();
    await p.ok('PUT', '/system/reload');
    console.log(`reconcile of ${N} peers without IKEv2: ${fmt(performance.now() - t)} ms`);
    await p.ok('PUT', '/ikev2', { enabled: '1' });
    const pid = (await ipsec.status()).pid!;
    const rssEmpty = rssMiB(pid);
    await p.db.prepare("UPDATE wireguard_servers SET ikev2 = 1 WHERE name = 'ike'").run();
    t = performance.now();
    await p.ok('PUT', '/system/reload');
    const fullLoad = performance.now() - t;
    const loaded = (await ipsec.status()).pid;
    if (loaded !== pid) throw new Error('charon restarted');
    const rssFull = rssMiB(pid);
    console.log(`IKEv2 full load (PUT /system/reload; ${N} EAP secrets over vici, pools and conns through swanctl): ${fmt(fullLoad)} ms`);
    console.log(`charon VmRSS: ${fmt(rssEmpty)} MiB without accounts, ${fmt(rssFull)} MiB with ${N} (${fmt(((rssFull - rssEmpty) * 1024) / N)} KiB per account)`);

    const off: number[] = [];
    const on: number[] = [];
    const create = async (server: string, i: number, prefix: string) => {
      const started = performance.now();
      await p.ok('POST', '/account', { wg_name: server, allowed_IPs: `${prefix}.${10 + i}` });
      return performance.now() - started;
    };
    for (let r = 0; r < ROUNDS; r++) {
      off.push(await create('plain', r, '10.200.1'));
      on.push(await create('ike', r, '10.65.1'));
    }
    const mOff = median(off);
    const mOn = median(on);
    console.log(`POST /account, IKEv2 off: median ${fmt(mOff)} ms; IKEv2 on (${N} loaded): median ${fmt(mOn)} ms; ratio ${(mOn / mOff).toFixed(2)}x (target <= 2x)`);
    if ((await ipsec.status()).pid !== pid) throw new Error('charon restarted during creates');
  } finally {
    await p.close();
    await ipsec.stop().catch(() => undefined);
    await dataplane.close().catch(() => undefined);
    await destroyNamespace(ns);
    rmSync(ipsecDir, { recursive: true, force: true });
  }
}

await main();
