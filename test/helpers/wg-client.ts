// A stock WireGuard client in a test namespace, brought up from the wg-quick text the panel hands out (config_text).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execIn } from './netns.ts';

/** The wg keys of a wg-quick text (what `wg setconf` accepts) and its first address. */
export function wgOnly(text: string): { conf: string; address: string } {
  let address = '';
  const keep = ['PrivateKey', 'PublicKey', 'PresharedKey', 'AllowedIPs', 'Endpoint', 'PersistentKeepalive'];
  const lines: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (/^\[\w+\]$/.test(line)) lines.push(line);
    const kv = /^(\w+)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    if (kv[1] === 'Address') address = kv[2].split(',')[0].trim();
    if (keep.includes(kv[1])) lines.push(`${kv[1]} = ${kv[2]}`);
  }
  return { conf: `${lines.join('\n')}\n`, address };
}

/**
 * Brings up `name` (wireguard-go) in `ns` from `configText`: keys and peer through `wg setconf` (a temp file, removed
 * at once), the config's first address, the link up, and a route to `route` through it. An existing `name` is
 * deleted first (a reconnect).
 */
export async function startWgClient(ns: string, name: string, configText: string, route: string): Promise<void> {
  const { conf, address } = wgOnly(configText);
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-wg-client-'));
  try {
    const confFile = join(dir, `${name}.conf`);
    writeFileSync(confFile, conf, { mode: 0o600 });
    if ((await execIn(ns, 'ip', ['link', 'show', name], { allowFailure: true })).exitCode === 0) await execIn(ns, 'ip', ['link', 'del', name]);
    await execIn(ns, 'wireguard-go', [name]);
    await execIn(ns, 'wg', ['setconf', name, confFile]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await execIn(ns, 'ip', ['addr', 'add', address, 'dev', name]);
  await execIn(ns, 'ip', ['link', 'set', name, 'up']);
  await execIn(ns, 'ip', ['route', 'add', route, 'dev', name]);
}
