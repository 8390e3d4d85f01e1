// The sample worker's counter read on a real wireguard-go interface with real traffic: the UAPI socket's counters
// (no `wg` process) are the ones `wg show <if> dump` prints, key for key; a missing interface is left to the driver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { readUapiTransfers } from '../../panel/dataplane/wireguard/linux/uapi-transfers.ts';
import { parseWgTransfers, type PeerTransfers } from '../../panel/dataplane/render/parse-wg-transfers.ts';
import { WorkerCounterReader } from '../../panel/services/statistics/worker-counters.ts';
import { createNamespace, destroyNamespace, execIn, uniqueWgName } from '../helpers/netns.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { wgTunnel } from '../helpers/wg-tunnel.ts';

const byKey = (t: PeerTransfers) => new Map(t.keys.map((k, i) => [k, [t.rx[i], t.tx[i]] as const]));

test('UAPI get=1 counters of a wireguard-go interface with traffic equal wg show dump; the worker reader holds them', async (t) => {
  if (!requireTools(t, ['wg', 'wireguard-go', 'ip', 'ping'], { root: true })) return;
  const gw = await createNamespace('vhua');
  let cl: string | null = null;
  try {
    cl = await createNamespace('vhub');
    const tunnel = await wgTunnel(gw, cl, '10.83.0');
    // two more peers without traffic (zero counters, other keys)
    for (const i of [3, 4]) await execIn(gw, 'wg', ['set', tunnel.server, 'peer', generateKeyPair().publicKey, 'allowed-ips', `10.83.0.${i}/32`]);
    const ping = await execIn(cl, 'ping', ['-c', '20', '-i', '0.05', '-s', '1000', '-W', '2', '10.83.0.1'], { allowFailure: true });
    assert.equal(ping.exitCode, 0, `ping through the tunnel: ${ping.stdout}`);
    // the client's keepalive (1 s) off, so the counters stand still while both reads run
    const serverKey = (await execIn(gw, 'wg', ['show', tunnel.server, 'public-key'])).stdout.trim();
    await execIn(cl, 'wg', ['set', tunnel.client, 'peer', serverKey, 'persistent-keepalive', '0']);

    const before = await readUapiTransfers(tunnel.server); // the socket path is the same from this namespace
    const dump = parseWgTransfers((await execIn(gw, 'wg', ['show', tunnel.server, 'dump'])).stdout);
    const after = await readUapiTransfers(tunnel.server);
    assert.ok(before && after, 'a wireguard-go interface answers on its UAPI socket');
    assert.equal(before.keys.length, 3);
    assert.deepEqual(new Set(before.keys), new Set(dump.keys));
    const moving = byKey(before);
    const [trafficKey] = [...moving].find(([, [rx, tx]]) => rx > 0)!;
    assert.ok(moving.get(trafficKey)![0] >= 20 * 1000 && moving.get(trafficKey)![1] >= 20 * 1000, 'the pings were counted both ways');
    const later = byKey(after);
    for (const [key, [rx, tx]] of byKey(dump)) {
      const [rx0, tx0] = moving.get(key)!;
      const [rx1, tx1] = later.get(key)!;
      assert.ok(rx0 <= rx && rx <= rx1 && tx0 <= tx && tx <= tx1, `${key}: dump ${rx}/${tx} outside the UAPI reads ${rx0}/${tx0}..${rx1}/${tx1}`);
      if (rx0 === rx1 && tx0 === tx1) assert.deepEqual([rx, tx], [rx0, tx0]);
    }

    const reader = new WorkerCounterReader();
    const missing = uniqueWgName();
    assert.deepEqual(await reader.read([tunnel.server, missing]), [{ iface: missing }], 'a missing interface is the driver\'s to judge');
    const held = reader.take(tunnel.server);
    assert.ok(held);
    assert.deepEqual(new Set(held.keys), new Set(dump.keys));
    for (const [key, [rx, tx]] of byKey(held)) assert.ok(rx >= later.get(key)![0] && tx >= later.get(key)![1], `${key}: the worker's read went back`);
    assert.equal(reader.take(tunnel.server), undefined, 'handed out once');
  } finally {
    if (cl) await destroyNamespace(cl);
    await destroyNamespace(gw);
  }
});
