// Bench (not a test): filling one server through POST /account, N in flight (group commit), on the simulated and the linux driver.
//
// Run as root (for linux): `node --import tsx test/bench/panel-fill.ts [--drivers simulated,linux] [--accounts 50000] [--in-flight 16]`.
// Each driver gets a panel process (`vpnhost panel serve`; linux: in a namespace the bench makes, wireguard-go,
// iptables + ipset, tc) and one /16 server whose accounts default to 8/4 Mbit/s, so every account is a WireGuard
// peer, a mark and two HTB classes. The bench POSTs accounts with `--in-flight` requests open at once and prints the
// overall rate and the rate of each tenth of the fill. On linux it then times, in the filled namespace, the raw floor
// of one batch of `--in-flight` new peers: one `wg set` with all of them, one `ipset restore` of their marks and one
// `tc -batch` of their classes and filters (both directions), as the panel's group commit renders them; the floor
// rate is `--in-flight` / that time. Everything the bench made is removed at the end.
import { parseArgs } from 'node:util';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { layoutOf, placePeer } from '../../panel/dataplane/render/tc-layout.ts';
import { orderOps, peerOps, renderOps } from '../../panel/dataplane/render/tc-peer.ts';
import { renderWgSetArgs } from '../../panel/dataplane/render/wg-set-args.ts';
import { startLinuxPanel } from '../helpers/linux-panel.ts';
import { destroyNamespace, uniqueWgName } from '../helpers/netns.ts';
import { PanelProcess } from '../helpers/panel-process.ts';
import { benchNeeds, fmt, hostIp16, median } from './bench-math.ts';
import { cpuByProcess, cpuPerUnit } from './process-cpu.ts';

const { values: args } = parseArgs({
  options: {
    drivers: { type: 'string', default: 'simulated,linux' },
    accounts: { type: 'string', default: '50000' },
    'in-flight': { type: 'string', default: '16' },
    'floor-samples': { type: 'string', default: '5' },
  },
  strict: true,
});
const DRIVERS = args.drivers!.split(',') as Array<'simulated' | 'linux'>;
const ACCOUNTS = Number(args.accounts);
const IN_FLIGHT = Number(args['in-flight']);
const FLOOR_SAMPLES = Number(args['floor-samples']);
const TARGET = { simulated: 400, linux: 250 };
const SEGMENTS = 10;

const hostIp = (i: number) => hostIp16('10.80', i);
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

interface Result {
  driver: string;
  rate: number;
  segments: number[];
  /** CPU per account of the bench's descendants during the fill, by command (`node`: the panel), from /proc. */
  cpu: string;
  /** Linux: the raw floor of one batch (ms) and its rate. */
  floorMs: number | null;
}

async function fill(panel: PanelProcess): Promise<{ rate: number; segments: number[] }> {
  const segments: number[] = [];
  let next = 0;
  let done = 0;
  let mark = process.hrtime.bigint();
  const start = mark;
  const worker = async () => {
    while (next < ACCOUNTS) {
      const i = next++;
      await panel.client.ok('POST', '/account', { wg_name: 'fill', name: `f${i}`, allowed_IPs: hostIp(i) });
      done++;
      if (done % (ACCOUNTS / SEGMENTS) === 0) {
        segments.push(ACCOUNTS / SEGMENTS / seconds(mark));
        mark = process.hrtime.bigint();
        process.stderr.write(`  ${done} accounts, ${fmt(segments[segments.length - 1], 0)}/s in the last tenth\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { rate: ACCOUNTS / seconds(start), segments };
}

/** One batch of IN_FLIGHT new peers at the raw tools: wg set + ipset restore + tc -batch, then removed again. */
async function rawBatch(runner: ExecaRunner, iface: string, round: number): Promise<number> {
  const layout = layoutOf({ name: iface, address: '10.80.0.1/16' }, { u32: true, ifb: true, leaf: null });
  const peers = Array.from({ length: IN_FLIGHT }, (_, k) => {
    const ip = `10.80.255.${10 + round * IN_FLIGHT + k}`;
    return { key: generateKeyPair().publicKey, ip, mark: 16_000_000 + round * IN_FLIGHT + k };
  });
  const placed = peers.map((p) => placePeer(layout, { key: p.key, ipv4: p.ip, ipv6: null, downloadMbit: 8, uploadMbit: 4 }));
  const add = renderOps(layout, orderOps(placed.flatMap((p) => peerOps(undefined, p))));
  const del = renderOps(layout, orderOps(placed.flatMap((p) => peerOps(p, undefined))));
  const set = `vpnhost-${iface}-4`;
  const start = process.hrtime.bigint();
  for (const argv of renderWgSetArgs(iface, { upsert: peers.map((p) => ({ publicKey: p.key, allowedIps: [`${p.ip}/32`], persistentKeepalive: 0 })), remove: [] })) {
    await runner.run('wg', argv);
  }
  await runner.run('ipset', ['restore', '-exist'], { input: `${peers.map((p) => `add ${set} ${p.ip} skbmark 0x${p.mark.toString(16)}/0xffffff`).join('\n')}\n` });
  await runner.run('tc', ['-batch', '-'], { input: `${add.join('\n')}\n` });
  const ms = seconds(start) * 1000;
  for (const argv of renderWgSetArgs(iface, { upsert: [], remove: peers.map((p) => p.key) })) await runner.run('wg', argv);
  await runner.run('ipset', ['restore', '-exist'], { input: `${peers.map((p) => `del ${set} ${p.ip}`).join('\n')}\n` });
  await runner.run('tc', ['-batch', '-'], { input: `${del.join('\n')}\n` });
  return ms;
}

async function measure(driver: 'simulated' | 'linux'): Promise<Result> {
  const license = { licenseAccounts: ACCOUNTS + 100, connections: IN_FLIGHT };
  const started = driver === 'linux' ? await startLinuxPanel('vhfl', license) : { ns: null, panel: await PanelProcess.start({ driver, ...license }) };
  const { ns, panel } = started;
  try {
    const iface = uniqueWgName();
    await panel.client.ok('POST', '/wireguard', { name: 'fill', interface_name: iface, listen_port: 51820, address: '10.80.0.1/16', external_ip: '192.0.2.1' });
    await panel.client.ok('PUT', '/wireguard/fill', { b_download: '8', b_upload: '4' });
    process.stderr.write(`${driver}: filling ${ACCOUNTS} accounts, ${IN_FLIGHT} in flight\n`);
    const cpuBefore = cpuByProcess();
    const { rate, segments } = await fill(panel);
    const cpu = cpuPerUnit(cpuBefore, new Map([...cpuByProcess()].filter(([name]) => name !== 'self')), ACCOUNTS);
    let floorMs: number | null = null;
    if (ns) {
      const runner = new ExecaRunner({ netns: ns });
      const samples: number[] = [];
      for (let round = 0; round < FLOOR_SAMPLES; round++) samples.push(await rawBatch(runner, iface, round));
      floorMs = median(samples);
    }
    return { driver, rate, segments, cpu, floorMs };
  } finally {
    await panel.cleanup();
    if (ns) await destroyNamespace(ns);
  }
}

async function main(): Promise<number> {
  if (DRIVERS.includes('linux')) {
    if (benchNeeds('panel-fill (linux)', ['ip', 'tc', 'wg', 'wireguard-go', 'iptables', 'ipset'])) return 2;
  }
  const results: Result[] = [];
  for (const driver of DRIVERS) results.push(await measure(driver));
  process.stdout.write(`\npanel-fill: ${ACCOUNTS} accounts through POST /account, ${IN_FLIGHT} in flight, shaped (8/4 Mbit/s) /16 server\n`);
  for (const r of results) {
    const verdict = r.rate >= TARGET[r.driver as 'simulated' | 'linux'] ? 'ok' : 'MISSED';
    process.stdout.write(`${r.driver.padEnd(10)} ${fmt(r.rate, 0).padStart(6)} accounts/s (target >= ${TARGET[r.driver as 'simulated' | 'linux']}) ${verdict}; ` +
      `by tenth: ${r.segments.map((s) => fmt(s, 0)).join(' ')}\n`);
    if (r.cpu) process.stdout.write(`           CPU per account: ${r.cpu}\n`);
    if (r.floorMs !== null) {
      const floorRate = (IN_FLIGHT / r.floorMs) * 1000;
      process.stdout.write(`           raw floor at ${ACCOUNTS}: one batch of ${IN_FLIGHT} (wg set + ipset restore + tc -batch) ${fmt(r.floorMs, 1)} ms = ` +
        `${fmt(floorRate, 0)} accounts/s; fill / floor ${fmt(r.rate / floorRate, 2)}\n`);
    }
  }
  return 0;
}

process.exitCode = await main();
