// Bench (not a test): the time of one IKEv2 connect with N accounts loaded, one connection per account (identity
// leases off) vs the one shared connection with addresses from the panel's identity lease responder (the default).
//
// Run (root, strongSwan installed): `node --import tsx test/bench/panel-ikev2-windows.ts [--accounts 10000] [--rounds 15]`.
// Each phase: the panel in process with simulated WireGuard/firewall/shaping twins and a real charon (kernel-libipsec)
// in a namespace the bench creates (with leases, the responder listens on a veth address of the bench's namespace, which
// charon's dhcp plugin reaches over that veth); N accounts written through the repository, IKEv2 enabled (one full load,
// timed); then a strongSwan client in a second namespace connects R times as `User_1` with its username as IKE identity
// and, with leases, R times as `User_2` with its IP address as identity and Windows' default proposals (what Windows'
// built-in client does; without leases it has no connection to match). Printed: the medians of `swanctl --initiate`
// (IKE_SA_INIT + IKE_AUTH with EAP-MSCHAPv2 + CHILD SA), their ratios, and charon's VmRSS. Each virtual IP is checked
// to be the account's own address.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSimulatedDataplane } from '../../panel/dataplane/create-dataplane.ts';
import { fixedRouteProbe } from '../../panel/dataplane/default-route.ts';
import { CharonIpsec } from '../../panel/dataplane/ipsec/linux/charon-ipsec.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { SimulatedDriver } from '../../panel/dataplane/wireguard/simulated/simulated-driver.ts';
import { makePanel } from '../integration/wireguard/panel-fixture.ts';
import { createNamespace, destroyNamespace, execIn, hostLink, uniqueWgName, vethPair } from '../helpers/netns.ts';
import { StrongswanClient } from '../helpers/strongswan-client.ts';
import { fmt, median } from './bench-math.ts';
import { fillAccounts } from './fill-accounts.ts';

const { values: args } = parseArgs({
  options: { accounts: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '15' } },
  strict: true,
});
const N = Number(args.accounts);
const ROUNDS = Number(args.rounds);
const SERVER_IKE = '10.197.1.1';
const CLIENT_IKE = '10.197.1.2';

/** The client's two connections: `own` (username as IKE identity) and `win` (no identity: its address; Windows' proposals). */
function clientConf(caId: string): string {
  const conn = (name: string, user: string, windows: boolean) => `  ${name} {
    version = 2
    remote_addrs = ${SERVER_IKE}
    vips = 0.0.0.0
    proposals = ${windows ? 'aes256-sha1-modp1024' : 'aes256gcm16-sha384-prfsha384-ecp384'}
    local { auth = eap-mschapv2${windows ? '' : `\n      id = ${user}`}
      eap_id = ${user} }
    remote { auth = pubkey
      id = ${caId} }
    children { ${name} { remote_ts = 10.64.0.0/10
      esp_proposals = ${windows ? 'aes256-sha1' : 'aes256gcm16-ecp384'} } }
  }`;
  return `connections {\n${conn('own', 'User_1', false)}\n${conn('win', 'User_2', true)}\n}
secrets {
  eap-1 { id = User_1
    secret = "password-1" }
  eap-2 { id = User_2
    secret = "password-2" }
}
`;
}

/** One phase: connect medians (ms) of the username client and, with leases, of the address-identified one. */
async function phase(leases: boolean): Promise<{ own: number; win: number | null; loadMs: number; rssMiB: number }> {
  const ns = await createNamespace('vhbw');
  const nsClient = await createNamespace('vhbwc');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-bench-win-'));
  const runner = new ExecaRunner({ netns: ns, timeoutMs: 600_000 });
  let p: Awaited<ReturnType<typeof makePanel>> | null = null;
  let ipsec: CharonIpsec | null = null;
  try {
    // with leases the responder listens in this namespace and charon's dhcp plugin reaches it over a veth
    const lease = leases ? { identityLeases: { address: (await hostLink(ns)).hostIp } } : {};
    ipsec = new CharonIpsec({ runner, dir: join(dir, 'ipsec'), libipsec: true, startTimeoutMs: 60_000, ...lease });
    await vethPair(ns, nsClient, `${SERVER_IKE}/30`, `${CLIENT_IKE}/30`);
    // the server's network on a link of charon's namespace, where the WireGuard interface holds it on the linux data
    // plane (charon routes each client's virtual IP into its TUN from there); a veth: there is no dummy driver here
    await execIn(ns, 'ip', ['link', 'add', 'vhbwsrv', 'type', 'veth', 'peer', 'name', 'vhbwsrvp']);
    await execIn(ns, 'ip', ['link', 'set', 'vhbwsrvp', 'up']);
    await execIn(ns, 'ip', ['addr', 'add', '10.64.0.1/10', 'dev', 'vhbwsrv']);
    await execIn(ns, 'ip', ['link', 'set', 'vhbwsrv', 'up']);

    const dataplane = createSimulatedDataplane({ wireguard: new SimulatedDriver(), ipsec });
    const now = new Date();
    p = await makePanel({ licenseAccounts: N + 10, clock: { now: () => now }, deps: { dataplane, routeProbe: fixedRouteProbe() } });
    await p.ok('POST', '/wireguard', { name: 'ike', address: '10.64.0.1/10', ikev2: '1', external_ip: SERVER_IKE, interface_name: uniqueWgName() });
    fillAccounts(p, 'ike', N, { firstOctets: [10, 64], keyByte: 5 });
    await p.ok('PUT', '/ikev2/generate_ca_rsa', { ca_common_name: 'Bench CA', ca_organization: 'vpnhost' });
    await p.ok('PUT', '/ikev2/generate_server_rsa', { server_domain: 'vpn.bench.test', server_ip: SERVER_IKE, server_common_name: 'vpn.bench.test', server_organization: 'vpnhost' });
    const t = performance.now();
    await p.ok('PUT', '/ikev2', { enabled: '1' });
    const loadMs = performance.now() - t;
    const status = await ipsec.status();
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${status.pid}/status`, 'utf8'))![1]) / 1024;

    const profile = JSON.parse(await p.ok<string>('GET', '/account/Account_2/ikev2_profile'));
    const client = new StrongswanClient(nsClient, join(dir, 'client'), { server: SERVER_IKE, remoteTs: ['10.64.0.0/10'] });
    await client.start();
    writeFileSync(join(dir, 'client', 'swanctl', 'x509ca', 'ca.der'), Buffer.from(profile.remote.cert, 'base64'));
    writeFileSync(join(dir, 'client', 'swanctl', 'swanctl.conf'), clientConf(profile.remote.id));
    await client.run(['--load-all', '--noprompt', '--file', join(dir, 'client', 'swanctl', 'swanctl.conf')]);

    const connect = async (child: 'own' | 'win'): Promise<number> => {
      const started = performance.now();
      const result = await client.run(['--initiate', '--child', child, '--timeout', '30'], true);
      const ms = performance.now() - started;
      if (result.exitCode !== 0) throw new Error(`${child}: connect failed: ${result.stdout.split('\n').slice(-5).join(' | ')}`);
      const sas = (await client.run(['--list-sas', '--raw'])).stdout;
      const want = child === 'own' ? '10.64.0.2' : '10.64.0.3'; // base + 1 + i
      if (!sas.includes(want)) throw new Error(`${child}: expected virtual IP ${want}`);
      if (child === 'win' && !sas.includes(`local-id=${CLIENT_IKE}`)) throw new Error('win: IKE identity is not the client address');
      await client.run(['--terminate', '--ike', child, '--timeout', '10'], true);
      return ms;
    };
    const own: number[] = [];
    const win: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      own.push(await connect('own'));
      if (leases) win.push(await connect('win'));
    }
    return { own: median(own), win: leases ? median(win) : null, loadMs, rssMiB: rss };
  } finally {
    await p?.close();
    await ipsec?.stop().catch(() => undefined);
    await destroyNamespace(nsClient);
    await destroyNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  }
}

const perAccount = await phase(false);
console.log(`one connection per account (leases off), ${N} accounts: full load ${fmt(perAccount.loadMs)} ms, charon ${fmt(perAccount.rssMiB)} MiB; ` +
  `connect (username as IKE identity) median ${fmt(perAccount.own)} ms`);
const shared = await phase(true);
console.log(`one shared connection + identity leases, ${N} accounts: full load ${fmt(shared.loadMs)} ms, charon ${fmt(shared.rssMiB)} MiB; ` +
  `connect with the username as IKE identity median ${fmt(shared.own)} ms, with the IP address as identity (like Windows) median ${fmt(shared.win!)} ms`);
console.log(`connect, per-account / shared: ${(perAccount.own / shared.own).toFixed(2)}x; shared, IP identity / username identity: ${(shared.win! / shared.own).toFixed(2)}x`);
