// A real panel process killed with SIGKILL mid-traffic: access lines of requests acknowledged more than a second before
// the kill are all in the log, and every auth-failure line is there, even for the refusal answered just before the kill.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { request } from 'undici';
import { LOG_LOSS_BOUND_MS } from '../../../panel/logger.ts';
import { until } from '../../fixtures/platform/http.ts';
import { PanelProcess } from '../../helpers/panel-process.ts';

/** Requests acknowledged longer than the loss bound before the kill that the check needs (traffic runs until then). */
const OLD_ACKS = 20;
const WORKERS = 3;

interface Ack {
  kind: 'create' | 'delete' | 'refused';
  path: string;
  at: number;
}

test('SIGKILL loses at most the last second of access lines and no security line', async (t) => {
  const panel = await PanelProcess.start({ driver: 'simulated', connections: WORKERS });
  try {
    await panel.client.ok('POST', '/wireguard', { name: 'srv' });
    const acks: Ack[] = [];
    let stop = false;
    let seq = 0;
    /** A refused request carrying the valid hash in its query (must never be logged) and a wrong cookie. */
    const refuse = async () => {
      const path = `/api/v1/system/status?access_hash=${panel.accessHash}`;
      const res = await request(`${panel.url}${path}`, { headers: { cookie: `access_hash=${'0'.repeat(80)}` } });
      await res.body.text();
      assert.equal(res.statusCode, 401);
      acks.push({ kind: 'refused', path, at: Date.now() });
    };
    const worker = async () => {
      while (!stop) {
        const n = ++seq;
        const name = `crash-${n}`;
        try {
          await panel.client.ok('POST', '/account', { wg_name: 'srv', name, allowed_IPs: `10.0.1.${2 + (n % 250)}` });
          acks.push({ kind: 'create', path: '/api/v1/account', at: Date.now() });
          await panel.client.ok('DELETE', `/account/${name}`);
          acks.push({ kind: 'delete', path: `/api/v1/account/${name}`, at: Date.now() });
          if (n % 5 === 0) await refuse();
        } catch (err) {
          if (!stop) throw new Error(`request failed before the kill (${name}): ${(err as Error).message}`);
        }
      }
    };
    const running = Array.from({ length: WORKERS }, () => worker());
    // Readiness, not a fixed time: traffic runs until enough requests were acknowledged longer ago than the bound (on a
    // slow machine that takes longer); a worker ends before the kill only by failing, and that failure is the test's.
    await Promise.race([
      until(async () => (acks.filter((a) => a.at < Date.now() - LOG_LOSS_BOUND_MS).length >= OLD_ACKS ? true : undefined), 60_000, 20),
      Promise.all(running),
    ]);
    // The last thing before the kill: a refusal, acknowledged, then SIGKILL at once while the workers keep sending.
    await refuse();
    const killedAt = Date.now();
    stop = true;
    await panel.kill('SIGKILL');
    const ended = await Promise.allSettled(running);
    assert.deepEqual(ended.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), [], 'no request failed before the kill');

    const lines = readFileSync(panel.logFile, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const access = lines.filter((l) => l.part === 'access');
    const old = acks.filter((a) => a.at < killedAt - LOG_LOSS_BOUND_MS); // at least OLD_ACKS: the wait above

    const loggedDeletes = new Set(access.filter((l) => l.method === 'DELETE' && l.statusCode === 200).map((l) => l.url));
    const missingDeletes = old.filter((a) => a.kind === 'delete' && !loggedDeletes.has(a.path));
    assert.deepEqual(missingDeletes, [], 'every DELETE acknowledged before the bound is logged');
    const loggedCreates = access.filter((l) => l.method === 'POST' && l.url === '/api/v1/account' && l.statusCode === 200).length;
    const oldCreates = old.filter((a) => a.kind === 'create').length;
    assert.ok(loggedCreates >= oldCreates, `creates logged ${loggedCreates} >= acknowledged before the bound ${oldCreates}`);

    const refusals = acks.filter((a) => a.kind === 'refused').length;
    const securityLines = lines.filter((l) => l.security === true && l.event === 'auth_failed').length;
    assert.equal(securityLines, refusals, 'one auth-failure line per refusal, the last one included');
    const mutations = acks.filter((a) => a.kind !== 'refused').length;
    const logged = access.filter((l) => l.method !== 'GET' && l.statusCode === 200).length - 1; // minus POST /wireguard
    t.diagnostic(`acknowledged ${acks.length} requests; access lines for ${logged} of ${mutations} mutations survived the kill`);
    assert.equal(readFileSync(panel.logFile, 'utf8').includes(panel.accessHash), false, 'the hash sent in the query is not logged');
  } finally {
    await panel.cleanup();
  }
});
