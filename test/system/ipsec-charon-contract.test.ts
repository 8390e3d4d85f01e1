// Runs the IPsec contract against the linux charon seam inside a network namespace (real charon-systemd, swanctl, vici).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CharonIpsec } from '../../panel/dataplane/ipsec/linux/charon-ipsec.ts';
import { ExecaRunner } from '../../panel/dataplane/linux/runner.ts';
import { runIpsecContract } from '../contract/ipsec.contract.ts';
import { createNamespace, destroyNamespace } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';

runIpsecContract('linux charon', async () => {
  const ns = await createNamespace('vhic');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-ipsec-contract-'));
  const make = () => new CharonIpsec({ runner: new ExecaRunner({ netns: ns }), dir, libipsec: true });
  return {
    ipsec: make(),
    kill: async (pid) => {
      process.kill(pid, 'SIGKILL');
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    restart: make,
    cleanup: async () => {
      await destroyNamespace(ns);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}, { gate: (t) => requireTools(t, ['swanctl', 'charon-systemd', 'start-stop-daemon', 'ip'], { root: true }) });
