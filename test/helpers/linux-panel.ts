// A panel process on the linux data plane inside a fresh namespace (with an external veth), and waiting for its boot reconcile.
import { randomInt } from 'node:crypto';
import { createNamespace, destroyNamespace, execIn } from './netns.ts';
import { PanelProcess, type PanelProcessOptions } from './panel-process.ts';

/**
 * A namespace `<prefix>-…` holding a veth whose end is the panel's external interface (192.0.2.1/24), and a panel
 * (`--driver linux`, userspace WireGuard) started in it. The caller removes both (`panel.cleanup()`,
 * `destroyNamespace(ns)`).
 */
export async function startLinuxPanel(prefix: string, opts: Partial<PanelProcessOptions> = {}): Promise<{ ns: string; panel: PanelProcess }> {
  const ns = await createNamespace(prefix);
  try {
    const ext = `vhx${randomInt(100000, 1000000)}`;
    await execIn(ns, 'ip', ['link', 'add', ext, 'type', 'veth', 'peer', 'name', `${ext}p`]);
    await execIn(ns, 'ip', ['addr', 'add', '192.0.2.1/24', 'dev', ext]);
    await execIn(ns, 'ip', ['link', 'set', ext, 'up']);
    const panel = await PanelProcess.start({ driver: 'linux', netns: ns, wireguard: 'userspace', externalInterface: ext, ...opts });
    return { ns, panel };
  } catch (err) {
    await destroyNamespace(ns);
    throw err;
  }
}

/** Waits (bounded, polling) until the panel's boot reconcile is over (`GET /system/status` says `OK`). */
export async function waitBooted(panel: PanelProcess, timeoutMs = 60_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; ) {
    const answer = await panel.client.request<{ status: string }>('GET', '/system/status').catch(() => null);
    if (answer?.body.msg?.status === 'OK') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the boot reconcile did not finish');
}
