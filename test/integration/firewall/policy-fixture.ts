// Test helpers for the network-policy API: a snapshot of data plane + policy store, and "refused, nothing changed".
import assert from 'node:assert/strict';
import type { TestPanel } from '../wireguard/panel-fixture.ts';

/**
 * Everything a network-policy request could change: the firewall's owned state (chains, rules, sets, policies;
 * counters stripped), every interface's tc state, the policy tables and the accounts' bandwidths.
 */
export async function policySnapshot(p: TestPanel): Promise<string> {
  const dp = p.dataplane;
  const parts = [await dp.firewall.dump()];
  for (const iface of (await dp.wireguard.listInterfaces()).sort()) {
    parts.push(`# tc ${iface}`, await dp.shaper.show(iface).catch((err: Error) => `(no shaping: ${err.message})`));
  }
  const rows = (sql: string) => JSON.stringify(p.db.prepare(sql).all());
  parts.push(
    rows('SELECT server_id, dst_port, protocol, account_id, to_port FROM port_forwards ORDER BY dst_port, protocol'),
    rows('SELECT * FROM firewall_filter_rules ORDER BY position'),
    rows('SELECT * FROM firewall_conf'),
    rows('SELECT name, status, b_download, b_upload FROM accounts ORDER BY id'),
  );
  return parts.join('\n');
}

/** Sends a request that must be refused with `text` (and `status` when given) and change nothing at all. */
export async function refused(
  p: TestPanel,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  form: Record<string, string> | undefined,
  text: string,
  status?: number,
): Promise<void> {
  const before = await policySnapshot(p);
  const answer = await p.call(method, path, form);
  const what = `${method} ${path} ${JSON.stringify(form ?? {})}`;
  assert.equal(answer.body.status, 'error', what);
  assert.equal(answer.body.error, text, what);
  assert.equal(answer.body.msg, '', what);
  if (status !== undefined) assert.equal(answer.status, status, what);
  assert.equal(await policySnapshot(p), before, `${what} changed nothing`);
}

/** Sends `method path` without the access hash: 401 `Not authorized`. */
export async function unauthorized(p: TestPanel, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string): Promise<void> {
  const res = await p.app.inject({ method, url: `/api/v1${path}` });
  assert.equal(res.statusCode, 401, `${method} ${path}`);
  assert.equal(res.json().error, 'Not authorized', `${method} ${path}`);
}
