// Runs the FlowSource contract against ulogd2 on NFLOG (the linux source) in a namespace: pings over a veth pair
// reach a mangle rule that hands them to the source's NFLOG group.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { UlogdSource } from '../../panel/dataplane/traffic-log/linux/ulogd-source.ts';
import { runFlowSourceContract } from '../contract/flow-source.contract.ts';
import { createNamespace, destroyNamespace, execIn, vethPair } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

runFlowSourceContract(
  'linux (ulogd2, NFLOG)',
  async () => {
    const nsGw = await createNamespace('fsgw');
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-flow-source-'));
    let nsPeer: string | null = null;
    const cleanup = async () => {
      if (nsPeer) await destroyNamespace(nsPeer);
      await destroyNamespace(nsGw);
      rmSync(dir, { recursive: true, force: true });
    };
    const group = 20_000 + randomInt(10_000);
    try {
      nsPeer = await createNamespace('fspeer');
      const { a } = await vethPair(nsGw, nsPeer, '10.251.0.1/30', '10.251.0.2/30');
      // the packets the panel's chain would log (its prefix names the state): here every ICMP packet from the peer
      await execIn(nsGw, 'iptables', ['-t', 'mangle', '-A', 'PREROUTING', '-i', a, '-p', 'icmp', '-j', 'NFLOG', '--nflog-prefix', 'new', '--nflog-group', String(group), '--nflog-threshold', '1']);
    } catch (err) {
      await cleanup(); // a setup that fails leaves no namespace behind (the suite's teardown only sees a built fixture)
      throw err;
    }
    const peer = nsPeer;
    const source = new UlogdSource(new ExecaRunner({ netns: nsGw }), { dir: join(dir, 'ulogd'), netns: nsGw, group, threshold: 1, flushMs: 50 });
    return {
      source,
      expected: { src: '10.251.0.2', dst: '10.251.0.1', protocol: 'icmp', family: 4 },
      produce: async () => void (await execIn(peer, 'ping', ['-c', '1', '-W', '1', '10.251.0.1'], { allowFailure: true })),
      cleanup,
    };
  },
  { gate: (t) => requireTools(t, ['ulogd', 'ip', 'iptables', 'ping'], { root: true }) },
);
